"""Claims files: a paper's printed figures in TOML, read and validated (every problem at once).

```toml
[study]
title = "..."
reference = "arXiv:..."
release = "owner/repo"          # optional: where the data was fetched from
commit = "d72d25d..."           # optional
parser = "umbrela-fallback@1"   # optional: the reading the paper used (first column, gates the exit code)

[runs]                          # a run = one or more files, paths relative to --root
"gpt-4o-mini" = ["results/gpt-4o-mini_annotations.jsonl"]
"llm-judge" = { files = ["qrels/judge.txt"], reader = "trec-qrels@1" }   # a run's own reader

[gold]                          # optional: gold kept apart from the runs, joined by item key
file = "qrels/human.txt"
reader = "trec-qrels@1"         # optional: else chosen by content

[[claims]]
id = "s4.2-regression"
where = "Section 4.2"
metric = "regression_rate"
old = "gpt-4o-mini"
new = "gpt-5-mini"
value = "28.0"                  # as printed: a string, so its precision is known
unit = "percent"                # percent | fraction | count | ratio
```

:func:`parse_claims` is pure (a dict in, a :class:`ClaimsFile` out);
:func:`load_claims` reads the file. Both raise one :class:`BadInput` listing
every problem, each named by its claim id (or position when the id is missing).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping

from replicate.errors import BadInput
from replicate.judge.select import RunEntry, run_entry
from replicate.stats.policy import POLICIES, Policy
from replicate.tomlfile import read_toml
from replicate.verify.matching import Printed
from replicate.verify.metrics import METRICS, UNITS, Metric, claim_unit
from replicate.verify.trials_claims import (
    SETTING_FIELDS,
    TrialClaim,
    TrialSettings,
    TrialsPart,
    parse_replication,
    parse_settings,
    parse_tables,
    parse_trial_claim,
)

STUDY_FIELDS = ("title", "reference", "release", "commit", "parser")
FIELDS_FIELDS = ("key_fields", "gold_field", "output_fields")
CLAIM_FIELDS = (
    "id", "where", "text", "metric", "value", "unit",
    "run", "old", "new", "runs", "parser", "unparsed",
)
TOP_LEVEL = ("study", "runs", "claims", "fields", "trials", "replication", "gold")
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
        return {"title": self.title, "reference": self.reference, "release": self.release, "commit": self.commit,
                "parser": self.parser}


@dataclass(frozen=True, slots=True)
class Claim:
    """One printed figure: what it measures, over which runs, and the value as printed."""

    id: str
    metric: str
    printed: Printed
    where: str = ""
    text: str = ""
    run: str | None = None
    old: str | None = None
    new: str | None = None
    runs: tuple[str, ...] = ()
    parser: str | None = None  # pinned parser (None: recompute under every parser asked)
    unparsed: Policy | None = None  # pinned unparsed policy (None: the default, intersect)
    position: int = 0  # 1-based position among [[claims]]

    @property
    def spec(self) -> Metric:
        return METRICS[self.metric]

    @property
    def scope(self) -> str:
        if self.runs:
            return "floor"
        if self.old is not None:
            return "edge"
        return "run"

    @property
    def run_names(self) -> tuple[str, ...]:
        if self.scope == "floor":
            return self.runs
        if self.scope == "edge":
            return (self.old, self.new)  # type: ignore[return-value]
        return (self.run,)  # type: ignore[return-value]

    @property
    def target(self) -> str:
        """What the figure is about, as a reader sees it."""
        if self.scope == "floor":
            return "floor of " + ", ".join(self.runs)
        if self.scope == "edge":
            return f"{self.old} -> {self.new}"
        return str(self.run)

    @property
    def policy(self) -> Policy:
        return self.unparsed or "intersect"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "metric": self.metric, "printed": self.printed.text,
                               "unit": self.printed.unit, "where": self.where, "text": self.text}
        if self.scope == "floor":
            out["runs"] = list(self.runs)
        elif self.scope == "edge":
            out.update(old=self.old, new=self.new)
        else:
            out["run"] = self.run
        out.update(parser=self.parser, unparsed=self.policy)
        return out


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

    def claim(self, claim_id: str) -> Claim:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)


def _close(name: str, options: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(table: Mapping[str, Any], allowed: tuple[str, ...]) -> list[str]:
    return [
        f"unknown field {k!r}{_close(k, allowed)}; allowed: {', '.join(allowed)}"
        for k in table if k not in allowed
    ]


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)


def _parse_runs(
    table: Any, problems: list[str], entries: dict[str, RunEntry] | None = None
) -> dict[str, tuple[str, ...]]:
    """Run name -> files; each valid entry (files, reader, reader options) also goes into ``entries``."""
    if table is None:
        problems.append("[runs]: missing table naming each run and its files")
        return {}
    if not isinstance(table, dict):
        problems.append("[runs]: must be a table of run name = [file, ...]")
        return {}
    runs: dict[str, tuple[str, ...]] = {}
    for name, value in table.items():
        try:
            entry = run_entry(name, value)
        except ValueError as exc:
            problems.append(f"[runs] {exc}")
            continue
        bad = [f for f in entry.files if Path(f).is_absolute() or ".." in Path(f).parts]
        if bad:
            problems.append(f"[runs] {name!r}: paths must be relative to --root without '..': {', '.join(bad)}")
            continue
        runs[name] = entry.files
        if entries is not None:
            entries[name] = entry
    return runs


def _parse_study(table: Any, problems: list[str], parsers: Collection[str] | None) -> Study:
    if table is None:
        return Study()
    if not isinstance(table, dict):
        problems.append("[study]: must be a table")
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
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.append("[gold]: must be a table: file = \"qrels.txt\", reader = \"trec-qrels@1\" (optional)")
        return {}
    problems.extend(f"[gold]: {p}" for p in _unknown_keys(table, GOLD_FIELDS))
    file, reader = table.get("file"), table.get("reader")
    if not isinstance(file, str) or not file or Path(file).is_absolute() or ".." in Path(file).parts:
        problems.append("[gold]: file must be a path relative to --root without '..'")
        return {}
    if reader is not None and not (isinstance(reader, str) and reader):
        problems.append("[gold]: reader must be a reader name such as 'trec-qrels@1'")
        return {}
    return {"file": file, **({"reader": reader} if reader else {})}


def _parse_fields(table: Any, problems: list[str]) -> dict[str, Any]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.append("[fields]: must be a table")
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


def _check_run_fields(c: dict, metric: Metric | None, runs: Mapping[str, Any], say) -> None:
    """The run/old/new/runs fields: the right ones for the metric's scope, naming known runs."""
    has = {k: k in c for k in ("run", "old", "new", "runs")}
    scopes = metric.scopes if metric is not None else ("run", "edge", "floor")
    given = [k for k, v in has.items() if v]

    def known(name: Any, what: str) -> None:
        if not isinstance(name, str):
            say(f"{what} must be a run name (string)")
        elif runs and name not in runs:
            say(f"unknown run {name!r} in {what}{_close(name, runs)}; runs: {', '.join(runs)}")

    if has["runs"]:
        if metric is not None and "floor" not in scopes:
            say(f"metric {metric.name!r} does not take 'runs'; it names {_scope_words(metric)}")
        elif has["run"] or has["old"] or has["new"]:
            say("give either 'runs' (a floor) or 'run' or 'old' and 'new', not several")
        elif not isinstance(c["runs"], list) or len(c["runs"]) < 2:
            say("runs must be a list of at least two repeat runs")
        else:
            for r in c["runs"]:
                known(r, "runs")
            if len(set(map(str, c["runs"]))) != len(c["runs"]):
                say("runs lists a run twice")
        return
    if has["old"] or has["new"]:
        if metric is not None and "edge" not in scopes:
            say(f"metric {metric.name!r} does not take 'old'/'new'; it names {_scope_words(metric)}")
            return
        if has["run"]:
            say("give either 'run' or 'old' and 'new', not both")
        for k in ("old", "new"):
            if has[k]:
                known(c[k], k)
            else:
                say(f"missing field {k!r} (an edge names old and new)")
        if has["old"] and has["new"] and c["old"] == c["new"]:
            say(f"old and new are the same run {c['old']!r}")
        return
    if has["run"]:
        if metric is not None and "run" not in scopes:
            say(f"metric {metric.name!r} does not take 'run'; it names {_scope_words(metric)}")
        else:
            known(c["run"], "run")
        return
    if metric is not None and not given:
        say(f"missing {_scope_words(metric)}")


def _scope_words(metric: Metric) -> str:
    words = {"run": "one run (run = \"NAME\")", "edge": "an edge (old = \"A\", new = \"B\")",
             "floor": "repeats (runs = [\"A\", \"B\", ...])"}
    return " or ".join(words[s] for s in metric.scopes)


def _parse_claim(
    c: Any, position: int, runs: Mapping[str, Any], parsers: Collection[str] | None,
    seen: dict[str, int], problems: list[str],
) -> Claim | None:
    if not isinstance(c, dict):
        problems.append(f"claims[{position}]: must be a table ([[claims]])")
        return None
    cid = c.get("id")
    label = f"claim {cid!r}" if isinstance(cid, str) and cid else f"claims[{position}]"
    before = len(problems)

    def say(message: str) -> None:
        problems.append(f"{label}: {message}")

    for p in _unknown_keys(c, CLAIM_FIELDS):
        say(p)
    for key in ("id", "metric", "value", "unit"):
        if key not in c:
            say(f"missing field {key!r}")
    if "id" in c:
        if not isinstance(cid, str) or not cid:
            say("id must be a non-empty string")
        elif cid in seen:
            say(f"duplicate id (also claims[{seen[cid]}])")
        else:
            seen[cid] = position
    metric = None
    if "metric" in c:
        name = c["metric"]
        if not isinstance(name, str) or name not in METRICS:
            say(f"unknown metric {name!r}{_close(str(name), METRICS)}; metrics: {', '.join(METRICS)}")
        else:
            metric = METRICS[name]
    unit = claim_unit(c, UNITS, metric, say)
    printed = None
    if "value" in c:
        value = c["value"]
        if not isinstance(value, str):
            say(f"value must be a string as printed (write value = \"{value}\"), got {type(value).__name__} {value!r}")
        elif unit is not None:
            try:
                printed = Printed.parse(value, unit)
            except ValueError as exc:
                say(str(exc))
    for key in ("where", "text"):
        if key in c and not isinstance(c[key], str):
            say(f"{key} must be a string")
    parser = c.get("parser")
    if "parser" in c:
        if not isinstance(parser, str):
            say("parser must be a parser name such as 'umbrela-fallback@1'")
        elif parsers is not None and parser not in parsers:
            say(f"unknown parser {parser!r}{_close(parser, parsers)}; parsers: {', '.join(parsers) or 'none'}")
    policy = c.get("unparsed")
    if "unparsed" in c and policy not in POLICIES:
        say(f"unknown unparsed policy {policy!r}; policies: {', '.join(POLICIES)}")
    _check_run_fields(c, metric, runs, say)
    if len(problems) > before or metric is None or printed is None:
        return None
    return Claim(
        id=str(cid), metric=metric.name, printed=printed, where=c.get("where", ""), text=c.get("text", ""),
        run=c.get("run"), old=c.get("old"), new=c.get("new"), runs=tuple(c.get("runs", ())),
        parser=parser, unparsed=policy, position=position,
    )


def parse_claims(data: Mapping[str, Any], *, path: str, parsers: Collection[str] | None = None) -> ClaimsFile:
    """Validate a claims table (as read from TOML) and build a :class:`ClaimsFile`.

    ``parsers`` is the set of known parser names (None: do not check). Every
    problem is collected; if there is any, one :class:`BadInput` lists them all.
    """
    problems: list[str] = []
    for key in data:
        if key not in TOP_LEVEL:
            problems.append(f"unknown table [{key}]{_close(key, TOP_LEVEL)}; allowed: {', '.join(TOP_LEVEL)}")
    study = _parse_study(data.get("study"), problems, parsers)
    entries: dict[str, RunEntry] = {}
    claims_raw = data.get("claims")
    trial_claims_raw = isinstance(claims_raw, list) and any(isinstance(c, dict) and "trials" in c for c in claims_raw)
    judge_claims_raw = not isinstance(claims_raw, list) or any(
        not (isinstance(c, dict) and "trials" in c) for c in claims_raw)
    if data.get("runs") is None and data.get("trials") is not None and not judge_claims_raw:
        runs: dict[str, tuple[str, ...]] = {}  # a K-trial study alone needs no [runs]
    else:
        runs = _parse_runs(data.get("runs"), problems, entries)
    tables = parse_tables(data.get("trials"), problems)
    if trial_claims_raw and data.get("trials") is None:
        problems.append("[trials]: missing table naming each trials table (claims name 'trials')")
    study_raw = data.get("study")
    study_table: Mapping[str, Any] = study_raw if isinstance(study_raw, dict) else {}
    settings = parse_settings(study_table, TrialSettings(), lambda m: problems.append(f"[study]: {m}"))
    replication = parse_replication(data.get("replication"), tables, problems)
    fields = _parse_fields(data.get("fields"), problems)
    gold = _parse_gold(data.get("gold"), problems)
    raw_runs = data["runs"] if isinstance(data.get("runs"), dict) else {}
    claims: list[Claim] = []
    trial_claims: list[TrialClaim] = []
    if claims_raw is None:
        problems.append("no [[claims]]: nothing to verify")
    elif not isinstance(claims_raw, list):
        problems.append("claims must be an array of tables ([[claims]])")
    else:
        seen: dict[str, int] = {}
        for i, c in enumerate(claims_raw, start=1):
            if isinstance(c, dict) and "trials" in c:
                tc = _parse_trial(c, i, tables, settings, seen, problems)
                if tc is not None:
                    trial_claims.append(tc)
                continue
            claim = _parse_claim(c, i, raw_runs, parsers, seen, problems)
            if claim is not None:
                claims.append(claim)
    if problems:
        n = len(problems)
        raise BadInput(f"{n} problem{'s' if n != 1 else ''} in the claims file:\n" + "\n".join(problems), path=path)
    return ClaimsFile(path, study, runs, tuple(claims), fields,
                      TrialsPart(tables, tuple(trial_claims), settings, replication), entries, gold)


def _parse_trial(
    c: dict, position: int, tables: Mapping[str, str], settings: TrialSettings, seen: dict[str, int],
    problems: list[str],
) -> TrialClaim | None:
    """A claim over a trials table: its id checked as any claim's, the rest by :mod:`trials_claims`."""
    cid = c.get("id")
    label = f"claim {cid!r}" if isinstance(cid, str) and cid else f"claims[{position}]"
    before = len(problems)

    def say(message: str) -> None:
        problems.append(f"{label}: {message}")

    if "id" in c:
        if not isinstance(cid, str) or not cid:
            say("id must be a non-empty string")
        elif cid in seen:
            say(f"duplicate id (also claims[{seen[cid]}])")
        else:
            seen[cid] = position
    claim = parse_trial_claim(c, label, position, cid, tables, settings, say)
    return claim if len(problems) == before else None




def load_claims(path: str | Path, *, parsers: Collection[str] | None = None) -> ClaimsFile:
    """Read and validate a claims file (see :func:`parse_claims`)."""
    data = read_toml(path, what="claims file")
    return parse_claims(data, path=str(path), parsers=parsers)
