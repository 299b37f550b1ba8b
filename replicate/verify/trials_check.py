"""Check a claims file's trial claims against loaded trials tables (pure: tables in, results out).

:func:`check_trials` recomputes every claim from the released table it names,
except claims over a table that a fresh collection replaces (``[replication]``
or ``--replication``): those are replicated, i.e. the fresh figure is judged
against the release's figure on the items both tables hold, within the
trials' sampling error (:mod:`replicate.verify.replication`).
A claim naming a model, benchmark or edge the table lacks is bad input; every
such problem is reported at once, by claim id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, UsageError
from replicate.trials.fresh import Agreement, agreement, collection_provenance, released_on_shared, shared_items
from replicate.trials.load import TrialsTable
from replicate.verify.claims_file import ReplicationSpec, TrialsPart
from replicate.verify.part import relative
from replicate.verify.replication import SHARED, ReplicationChecker, family_corrected
from replicate.verify.sources.trials import ReplicationReport, TableInfo, TrialClaimResult, Trials
from replicate.verify.trials_recompute import TrialsRecomputer, problems_with_names

FRESH = " (fresh)"


def _info(name: str, role: str, t: TrialsTable, root: str, spec: ReplicationSpec | None = None) -> TableInfo:
    prov = t.provenance.to_json() if t.provenance else {"path": t.path}
    path = relative(t.path, root)
    origin, given, archive = ("[trials]" if role == "released" else "[replication]", path, None) if spec is None \
        else (spec.origin, spec.trials, spec.archive if spec.archive_given else None)
    return TableInfo(name, role, path, prov, t.n_rows, t.models, t.benchmarks, t.scorers, origin, given, archive,
                     t.provenance)


def check_trials(
    part: TrialsPart,
    tables: Mapping[str, TrialsTable],
    fresh: Mapping[str, TrialsTable] | None = None,
    *,
    archives: Mapping[str, dict[str, Any] | None] | None = None,
    root: str = ".",
    claims_path: str = "claims file",
    diagnostics: Diagnostics | None = None,
    specs: Mapping[str, ReplicationSpec] | None = None,
) -> Trials:
    """Recompute (or, for tables in ``fresh``, replicate) every trial claim of ``part``.

    ``specs`` says, per fresh table, where it was named (its origin, path and
    archive as written), for the note's Reproduce block.
    """
    fresh = dict(fresh or {})
    diag = diagnostics if diagnostics is not None else Diagnostics()
    problems: list[str] = []
    for name, table, label in [*((n, t, f"trials table {n!r}") for n, t in tables.items()),
                               *((n, t, f"the fresh collection for {n!r}") for n, t in fresh.items())]:
        problems += problems_with_names([c for c in part.claims if c.trials == name], table, label)
    if problems:
        n = len(problems)
        raise BadInput(f"{n} problem{'s' if n != 1 else ''} with the trial claims:\n" + "\n".join(problems),
                       path=claims_path)
    all_tables: dict[str, TrialsTable] = dict(tables)
    diffs = {}
    shared_name: dict[str, str] = {}
    for name, table in fresh.items():
        restricted, diffs[name] = shared_items(tables[name], table)
        all_tables[name + FRESH] = restricted
        on_shared = released_on_shared(tables[name], table)
        shared_name[name] = name if on_shared is None else name + SHARED
        if on_shared is not None:
            all_tables[name + SHARED] = on_shared
    rc = TrialsRecomputer(all_tables, diag)
    rc.prepare(part.claims)
    replicated = [c for c in part.claims if c.trials in fresh]
    rc.prepare(replicated, {name: name + FRESH for name in fresh})
    rc.prepare(replicated, {name: shared_name[name] for name in fresh})  # all edges at once: one BH family
    checkers = {name: ReplicationChecker(rc, name, name + FRESH, shared_name[name]) for name in fresh}
    results = []
    for c in part.claims:
        released = rc.compute(c)
        if c.trials in fresh:
            rep = checkers[c.trials].check(c)
            results.append(TrialClaimResult(c, rep.computed, replicated=rep, released=released))
            continue
        results.append(TrialClaimResult(c, released))
    for name in fresh:  # Holm over each collection's tested claims
        at = [k for k, r in enumerate(results) if r.replicated is not None and r.claim.trials == name]
        fixed = family_corrected([results[k].replicated for k in at])  # type: ignore[misc]
        for k, rep in zip(at, fixed):
            results[k] = replace(results[k], replicated=rep)
    reports = []
    for name, table in fresh.items():
        seen: dict[tuple, Agreement] = {}
        for c in part.claims:
            if c.trials == name and c.spec.scope == "cell":
                s = c.settings
                key = (rc.edge_of(c, name), c.benchmark, s.eps, s.alpha, s.ci)
                if key not in seen:
                    # the paper's classification (the whole release) against the fresh one, on the shared items
                    seen[key] = agreement(rc.cell(c, name), rc.cell(c, name + FRESH))
        prov = collection_provenance(name, table, diffs[name], (archives or {}).get(name))
        reports.append(ReplicationReport(name, prov, tuple(seen.values())))
    infos = [_info(n, "released", t, root) for n, t in tables.items()]
    infos += [_info(n, "fresh", t, root, (specs or {}).get(n)) for n, t in fresh.items()]
    named = [c for c in part.claims if c.spec.scope == "cell" and c.edge and c.trials not in fresh]
    cells = tuple(dict.fromkeys(x for x in (_cell_or_none(rc, c) for c in named) if x is not None))
    return Trials(tuple(results), tuple(infos), tuple(reports), diag.to_json(), cells)


def _cell_or_none(rc: TrialsRecomputer, c: Any) -> Any:
    """The released cell a claim names, or None where it cannot be computed (the claim says why)."""
    try:
        return rc.cell(c, c.table)
    except (KeyError, UsageError):
        return None
