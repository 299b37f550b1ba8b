"""Claims over K-trial studies: the ``[trials]`` and ``[replication]`` tables and trial claims (pure).

```toml
[study]
seed = 12345        # settings that change a figure, for every trial claim (a claim may override):
eps = "0.2"         # eps, alpha, ci, null, seed, by (items); low, high, threshold (screen);
                    # tolerance (replication)
[trials]
study = ["trials.jsonl"]          # trials tables, named like [runs]; paths relative to --root

[replication]                     # optional: a fresh collection replaces a table
study = "fresh/trials.jsonl"      # or {trials = "fresh/trials.jsonl", archive = "fresh/archive.jsonl"}

[[claims]]
id = "t2-supergpqa-plus"
metric = "items.p_plus"
trials = "study"
edge = "gpt-5.4:gpt-5.5"
benchmark = "SuperGPQA"           # omit for the cell pooled over benchmarks
value = "12.4"
unit = "percent"
```

A claim is a trial claim when it names ``trials``. Problems are appended to
the caller's list, each named by the claim's id, so that one error lists every
problem of the file (judge and trial claims together).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any

from replicate.stats.intervals import DIFF_METHODS
from replicate.verify.matching import Printed
from replicate.verify.metrics import claim_unit
from replicate.verify.trials_metrics import (
    TRIAL_UNITS,
    TrialMetric,
    trial_metric,
    trial_metric_names,
)

#: Settings a [study] or a trial claim may give, with the engine's defaults.
SETTING_FIELDS = ("eps", "alpha", "ci", "null", "seed", "by", "low", "high", "threshold", "tolerance")
TRIAL_CLAIM_FIELDS = (
    "id", "where", "text", "metric", "value", "unit", "trials", "edge", "benchmark", "model", *SETTING_FIELDS,
)
BY_CHOICES = ("benchmark", "none")

_FLAG_WORDS = {"pass": True, "passes": True, "yes": True, "true": True,
               "fail": False, "fails": False, "no": False, "false": False}


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """Settings that change a trial figure. ``given`` names those the claims file set (the rest are defaults)."""

    eps: str = "0.2"
    alpha: float = 0.05
    ci: str = "newcombe"
    null: int = 1000
    seed: int = 12345
    by: str | None = None  # None: from the claim (a benchmark -> "benchmark", none -> "none")
    low: str = "0.1"
    high: str = "0.9"
    threshold: str = "0.35"
    tolerance: str = "0.05"
    given: frozenset[str] = frozenset()

    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name != "given":
                v = getattr(self, f.name)
                out[f.name] = float(v) if f.name in ("eps", "low", "high", "threshold", "tolerance") else v
        out["given"] = sorted(self.given)
        return out

    def fraction(self, name: str) -> Fraction:
        return Fraction(Decimal(str(getattr(self, name))))


@dataclass(frozen=True, slots=True)
class PrintedFlag:
    """A pass/fail printed for a screening rule."""

    text: str
    value: bool
    unit: str = "flag"
    places: int = 0

    def show_interval(self) -> str:
        return "= " + ("pass" if self.value else "fail")


@dataclass(frozen=True, slots=True)
class TrialClaim:
    """One printed figure of a K-trial study."""

    id: str
    metric: str
    printed: Printed | PrintedFlag
    trials: str  # the [trials] table it is computed from
    settings: TrialSettings
    spec: TrialMetric
    where: str = ""
    text: str = ""
    edge: str | None = None  # "A:B" as written (split against the table's models when loaded)
    benchmark: str | None = None
    model: str | None = None
    position: int = 0

    @property
    def by(self) -> str:
        return "benchmark" if self.benchmark is not None else "none"

    @property
    def target(self) -> str:
        """What the figure is about, as a reader sees it."""
        bench = self.benchmark if self.benchmark is not None else "all benchmarks pooled"
        if self.spec.scope == "cell":
            return f"{(self.edge or '').replace(':', ' -> ', 1)}, {bench}"
        if self.spec.scope == "model":
            return f"{self.model}, {self.benchmark}"
        return str(self.benchmark)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "metric": self.metric, "printed": self.printed.text,
                               "unit": self.printed.unit, "where": self.where, "text": self.text,
                               "trials": self.trials}
        if self.spec.scope == "cell":
            out["edge"] = self.edge
        if self.spec.scope == "model":
            out["model"] = self.model
        out["benchmark"] = self.benchmark
        return out


@dataclass(frozen=True, slots=True)
class ReplicationSpec:
    """A fresh collection standing in for a [trials] table: its trials table and, optionally, its archive."""

    name: str
    trials: str
    archive: str | None = None
    origin: str = "claims file"  # "claims file" or "--replication"


@dataclass(frozen=True)
class TrialsPart:
    """The trial side of a claims file."""

    tables: dict[str, str] = field(default_factory=dict)  # name -> path relative to --root
    claims: tuple[TrialClaim, ...] = ()
    settings: TrialSettings = TrialSettings()
    replication: dict[str, ReplicationSpec] = field(default_factory=dict)


def _close(name: str, options: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _decimal_text(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        d = Decimal(str(v).strip())
    except InvalidOperation:
        return None
    return str(v).strip() if d.is_finite() else None


def parse_settings(table: Mapping[str, Any], base: TrialSettings, say: Callable[[str], None]) -> TrialSettings:
    """The settings of ``table`` (a [study] or a claim) over ``base``; bad values are said, not raised."""
    values: dict[str, Any] = {}
    for key in SETTING_FIELDS:
        if key not in table:
            continue
        v = table[key]
        if key in ("eps", "low", "high", "threshold", "tolerance"):
            text = _decimal_text(v)
            if text is None or not 0 <= Decimal(text) <= 1 or (key in ("eps", "tolerance") and Decimal(text) == 0):
                say(f"{key} must be a number in {'(0, 1]' if key in ('eps', 'tolerance') else '[0, 1]'}, got {v!r}")
                continue
            values[key] = text
        elif key == "alpha":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
                say(f"alpha must be a number in (0, 1), got {v!r}")
                continue
            values[key] = float(v)
        elif key in ("null", "seed"):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                say(f"{key} must be a whole number >= 0, got {v!r}")
                continue
            values[key] = v
        elif key == "ci":
            if v not in DIFF_METHODS:
                say(f"unknown ci {v!r}; methods: {', '.join(DIFF_METHODS)}")
                continue
            values[key] = v
        elif key == "by":
            if v not in BY_CHOICES:
                say(f"by must be one of {', '.join(BY_CHOICES)}, got {v!r}")
                continue
            values[key] = v
    return replace(base, **values, given=base.given | frozenset(values))


def parse_tables(table: Any, problems: list[str]) -> dict[str, str]:
    """``[trials]``: name = ["file"] (one trials table per name), paths relative to --root."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.append("[trials]: must be a table of name = [trials table]")
        return {}
    out: dict[str, str] = {}
    for name, files in table.items():
        if isinstance(files, str) and files:
            files = [files]
        if not (isinstance(files, list) and files and all(isinstance(f, str) and f for f in files)):
            problems.append(f"[trials] {name!r}: must be a list naming one trials table (a path)")
            continue
        if len(files) != 1:
            problems.append(f"[trials] {name!r}: names {len(files)} files; give one trials table per name "
                            "(a study in several tables is several names)")
            continue
        if not _relative(files[0]):
            problems.append(f"[trials] {name!r}: paths must be relative to --root without '..': {files[0]}")
            continue
        out[name] = files[0]
    return out


def _relative(path: str) -> bool:
    return not (Path(path).is_absolute() or ".." in Path(path).parts)


def parse_replication(table: Any, tables: Mapping[str, str], problems: list[str]) -> dict[str, ReplicationSpec]:
    """``[replication]``: name = "fresh.jsonl" or {trials = "...", archive = "..."}; the name is a [trials] table."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.append("[replication]: must be a table of name = fresh trials table")
        return {}
    out: dict[str, ReplicationSpec] = {}
    for name, v in table.items():
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
        unknown = [k for k in v if k not in ("trials", "archive")]
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; allowed: trials, archive")
        paths = {k: v.get(k) for k in ("trials", "archive")}
        if not isinstance(paths["trials"], str) or not paths["trials"]:
            problems.append(f"{where}: trials must be the path of the fresh trials table")
            continue
        bad = [p for p in paths.values() if isinstance(p, str) and not _relative(p)]
        if paths["archive"] is not None and not isinstance(paths["archive"], str):
            problems.append(f"{where}: archive must be a path")
            continue
        if bad:
            problems.append(f"{where}: paths must be relative to --root without '..': {', '.join(bad)}")
            continue
        out[name] = ReplicationSpec(name, paths["trials"], paths["archive"])
    return out


def _printed(value: Any, unit: str | None, say: Callable[[str], None]) -> Printed | PrintedFlag | None:
    if not isinstance(value, str):
        say(f"value must be a string as printed (write value = \"{value}\"), got {type(value).__name__} {value!r}")
        return None
    if unit is None:
        return None
    if unit == "flag":
        word = value.strip().lower()
        if word not in _FLAG_WORDS:
            say(f"value {value!r} of unit 'flag' must be pass or fail")
            return None
        return PrintedFlag(value, _FLAG_WORDS[word])
    try:
        return Printed.parse(value, unit)
    except ValueError as exc:
        say(str(exc))
        return None


def parse_trial_claim(
    c: Mapping[str, Any], label: str, position: int, cid: Any, tables: Mapping[str, str], base: TrialSettings,
    say: Callable[[str], None],
) -> TrialClaim | None:
    """A claim naming ``trials``: every problem is said; a claim is returned only when there is none.

    Its id (empty, duplicate) is checked by the caller, which also rejects the claim if it found a problem.
    """
    problems = 0

    def bad(message: str) -> None:
        nonlocal problems
        problems += 1
        say(message)

    for k in c:
        if k not in TRIAL_CLAIM_FIELDS:
            bad(f"unknown field {k!r}{_close(k, TRIAL_CLAIM_FIELDS)}; allowed in a trial claim: "
                f"{', '.join(TRIAL_CLAIM_FIELDS)}")
    for key in ("id", "metric", "value", "unit"):
        if key not in c:
            bad(f"missing field {key!r}")
    name = c.get("trials")
    if not isinstance(name, str) or name not in tables:
        bad(f"unknown trials table {name!r}{_close(str(name), tables)}; [trials] tables: "
            f"{', '.join(tables) or 'none'}")
    metric = None
    if "metric" in c:
        metric = trial_metric(c["metric"]) if isinstance(c["metric"], str) else None
        if metric is None:
            bad(f"unknown trial metric {c['metric']!r}{_close(str(c['metric']), trial_metric_names())}; "
                f"metrics: {', '.join(trial_metric_names())}")
    unit = claim_unit(c, TRIAL_UNITS, metric, bad, units_of="units of trial figures")
    printed = _printed(c["value"], unit, bad) if "value" in c else None
    for key in ("where", "text", "edge", "benchmark", "model"):
        if key in c and (not isinstance(c[key], str) or not c[key]):
            bad(f"{key} must be a non-empty string")
    if metric is not None:
        _check_scope(c, metric, bad)
    settings = parse_settings(c, base, bad)
    if metric is not None:
        if settings.by == "none" and "benchmark" in c and metric.scope == "cell":
            bad("by = \"none\" pools the benchmarks: leave out 'benchmark'")
        if settings.by == "benchmark" and "benchmark" not in c and metric.scope == "cell":
            bad("by = \"benchmark\" needs a 'benchmark' (omit both for the pooled cell)")
        if metric.needs_null:
            if "seed" not in settings.given:
                bad(f"{metric.name} depends on the permutation null's seed, which neither the claim nor "
                    "[study] gives (add seed = N)")
            if settings.null == 0:
                bad(f"{metric.name} needs the permutation null, but null = 0 turns it off")
    if problems or metric is None or printed is None or not isinstance(name, str):
        return None
    return TrialClaim(
        id=cid, metric=metric.name, printed=printed, trials=name, settings=settings, spec=metric,
        where=c.get("where", ""), text=c.get("text", ""), edge=c.get("edge"), benchmark=c.get("benchmark"),
        model=c.get("model"), position=position,
    )


_SCOPE_WORDS = {
    "cell": 'an edge = "A:B" and a benchmark (none for the cell pooled over benchmarks)',
    "model": "a model and a benchmark",
    "benchmark": "a benchmark",
}


def _check_scope(c: Mapping[str, Any], metric: TrialMetric, bad: Callable[[str], None]) -> None:
    wants = {"cell": ("edge",), "model": ("model", "benchmark"), "benchmark": ("benchmark",)}[metric.scope]
    for k in wants:
        if k not in c:
            bad(f"missing field {k!r} (metric {metric.name!r} names {_SCOPE_WORDS[metric.scope]})")
    for k in ("edge", "model"):
        if k in c and k not in wants:
            bad(f"metric {metric.name!r} does not take {k!r}")
    edge = c.get("edge")
    if isinstance(edge, str) and edge:
        parts = [i for i, ch in enumerate(edge) if ch == ":" and 0 < i < len(edge) - 1]
        if not parts:
            bad(f"edge must look like SOURCE:TARGET, got {edge!r}")
