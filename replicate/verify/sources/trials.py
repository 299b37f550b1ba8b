"""The trials part: claims over K-trial tables as the note draws them: recomputed and replicated tables,
settings, replications (pure rendering)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from replicate.output import Format, md_code, md_text, one_line, pct, table
from replicate.printed import Verdict
from replicate.provenance import FileProvenance
from replicate.stats.figure_comparison import THRESHOLD_TEST
from replicate.stats.replication import (
    DOES_NOT_REPLICATE,
    PAIRED_SHARE_INTERVAL,
    PAIRED_T_TEST,
    REPLICATES,
    SHARE_INTERVAL,
    UNDERPOWERED,
)
from replicate.trials.fresh import Agreement, CollectionProvenance
from replicate.trials.fresh_render import agreement_lines, collection_lines
from replicate.trials.settings import TrialSettings
from replicate.verify.matching import Computed, PrintedFlag
from replicate.verify.part import Checked, Part, counts, matched
from replicate.verify.replication import DESIGN_TEST, Replicated
from replicate.verify.sources.runs_sections import figures_section
from replicate.verify.table_cells import checked_table, figure_cell, fitted, printed_text, reasons, show, verdict_cell

RECOMPUTED = "recomputed"
REPLICATED = "replicated"


@dataclass(frozen=True)
class TrialClaimResult(Checked):
    """One trial claim: recomputed from the release, or replicated against a fresh collection."""

    replicated: Replicated | None = None
    released: Computed | None = None  # replicated: the same figure recomputed from the release

    @property
    def mode(self) -> str:
        """recomputed (from the release) or replicated (against a fresh collection)."""
        return RECOMPUTED if self.replicated is None else REPLICATED

    @property
    def judged(self) -> Replicated | None:
        return self.replicated

    def to_json(self) -> dict:
        out = super().to_json()
        out.update(mode=self.mode, n_items=self.computed.n, settings={**self.claim.settings.to_json(), "by": self.claim.by})
        if self.mode == RECOMPUTED:
            out["matches"] = self.claim.printed.show_interval()
            out["tie"] = self.outcome.tie
        else:
            assert self.replicated is not None
            out.update(self.replicated.to_json())
            out["released"] = None if self.released is None else self.released.to_json()
            if self.replicated.fresh_outcome is not None:
                out["fresh_outcome"] = self.replicated.fresh_outcome
        return out


@dataclass(frozen=True)
class TableInfo:
    """A trials table read for the check (the release's, or a fresh collection's)."""

    name: str
    role: str  # released | fresh
    path: str  # relative to --root where it is under it
    provenance: dict[str, Any]
    rows: int
    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    scorers: tuple[str, ...]
    origin: str = "[trials]"  # [trials], [replication] or --replication
    given: str = ""  # the path as written where it was given (for the note's Reproduce block)
    archive: str | None = None  # the archive as given (--replication-archive), if any
    file: FileProvenance | None = None  # the file's provenance (its fetched release, if any)

    def to_json(self) -> dict:
        return {"name": self.name, "role": self.role, "path": self.path, "origin": self.origin,
                "file": self.provenance, "rows": self.rows, "models": list(self.models),
                "benchmarks": list(self.benchmarks), "scorers": list(self.scorers)}


@dataclass(frozen=True)
class ReplicationReport:
    """One fresh collection: its provenance and the item-level agreement of each cell a claim names."""

    name: str
    provenance: CollectionProvenance
    agreements: tuple[Agreement, ...] = ()

    def to_json(self) -> dict:
        return {"name": self.name, "provenance": self.provenance.to_json(),
                "agreement": [a.to_json() for a in self.agreements]}


def _points(r: TrialClaimResult, x: float) -> str:
    """A difference of fractions in the printed scale (percentage points for percent)."""
    p = r.claim.printed
    places = (1 if isinstance(p, PrintedFlag) else p.places) + 1
    if p.unit in ("percent", "count", "flag"):  # a count or a pass/fail is compared as a share
        return f"{100 * x:+.{places}f}"
    return f"{x:+.{max(places, 3)}f}"


def _withheld(r: TrialClaimResult) -> str | None:
    """Why a verdict is withheld (a subset's item count), if it is."""
    return r.replicated.why if r.replicated is not None else None


def _interval(r: TrialClaimResult) -> str:
    rep = r.replicated
    if rep is None or rep.comparison is None:
        return "-"
    c = rep.comparison
    unit = " pts" if r.claim.printed.unit in ("percent", "flag", "count") else ""
    return f"[{_points(r, c.low)}, {_points(r, c.high)}]{unit}"


def _p(r: TrialClaimResult) -> str:
    rep = r.replicated
    if rep is None or rep.comparison is None or rep.comparison.p_value is None:
        return "-"
    return f"{rep.comparison.p_value if rep.p_adjusted is None else rep.p_adjusted:.3g}"  # the p the verdict read


def replicated_table(results: list[TrialClaimResult], fmt: Format, notes: dict[str, int]) -> str:
    plain = fmt is Format.table
    esc = one_line if plain else md_text
    rows = []
    for r in results:
        rows.append([esc(r.claim.id), figure_cell(r.claim.metric, r.claim.described(esc), plain), printed_text(r.claim.printed),
                     show(r.claim.printed, _release_there(r)), show(r.claim.printed, r.computed.value),
                     "-" if r.computed.n is None else r.computed.n, _interval(r), _p(r), verdict_cell(r.outcome, notes, _withheld(r))])
    # no verdict without its n: the fresh figure's items (an underpowered verdict is about them)
    headers = ["id", "figure", "printed", "release", "fresh", "n", "95% interval, fresh - release", "Holm p", "verdict"]
    return fitted(rows, headers, fmt)


def _release_there(r: TrialClaimResult) -> Any:
    """The release's figure on the items compared (the shared ones), else over all its items."""
    on = r.replicated.compared_on if r.replicated is not None else None
    if on is not None:
        return on.released_on_shared.value
    return r.released.value if r.released else None


def _compared_on(r: TrialClaimResult) -> str:
    """What a replicated claim's comparison stands on: the shared items of the release's, and any misprint."""
    on = r.replicated.compared_on if r.replicated is not None else None
    if on is None:
        return ""
    p = r.claim.printed
    whole = show(p, r.released.value if r.released else None)  # the release's figure over all its items
    out = ""
    if on.subset:
        out += (f" on the {on.items} shared items of {on.of} (the release's figure there: "
                f"{show(p, on.released_on_shared.value)}; over all {on.of}: {whole})")
    if on.misprint:
        of = f" of its {r.released.n} items" if p.unit == "count" and r.released else ""
        out += (f"; the printed figure differs from the release's ({whole}"
                f") by {_points(r, on.misprint)}{' pts' if p.unit in ('percent', 'count') else ''}{of}, and the "
                "comparison carries that difference")
    return out


#: Each test a replicated claim is judged by: its name in the claim's line, and what the note says of it.
TESTS = {
    PAIRED_T_TEST: ("paired t test", "**Means over items** (accuracy, Δ, ΔR): " + PAIRED_T_TEST + ". Both figures "
                    "stand on the same items, so the sampling error is the trials': each item's rate varies as a "
                    "binomial share of its K trials, estimated as p(1 - p) / (K - 1), on each side; the two "
                    "sides' variances add. ΔR adds the variances of its loose and strict means (conservative). "
                    "The interval is the difference ± t standard errors, t with Welch-Satterthwaite degrees "
                    "of freedom (each item's variance estimate counting K - 1); p is two-sided."),
    PAIRED_SHARE_INTERVAL: ("paired Newcombe interval", "**Shares of a cell's items** (P+, P-, Pchg, improved, "
                            "regressed, changed, equivalent, inconclusive; a count as a share of the shared items): "
                            + PAIRED_SHARE_INTERVAL + ", 95%: each shared item's class on the two sides "
                            "crossed (in the class on both, on one only, on neither), so only the items "
                            "whose class moves separate the two figures. **does not replicate** also needs "
                            "the swap test to reject (p): each shared item's release and fresh readings "
                            "exchanged at random, both sides' classes redone, 2,000 seeded draws."),
    SHARE_INTERVAL: ("Newcombe interval", "**Shares without a per-item reading** (the null's 95th percentiles, a "
                     "screening share): " + SHARE_INTERVAL + ", 95%, from the two Wilson intervals, both over the "
                     "shared items. Conservative (it ignores that the items are the same). No p-value."),
    DESIGN_TEST: ("exact", "**Item counts** (items.n, screen.n_items): " + DESIGN_TEST + "; equal or not, and only "
                  "when the fresh collection holds all the claim's items (on a subset: underpowered, with "
                  "the reason)."),
    THRESHOLD_TEST: ("Wilson interval vs threshold", "**Pass/fail** (screen.passes): " + THRESHOLD_TEST + ". The "
                     "fresh benchmark passes (fails) when the whole 95% interval lies at or above (below) the "
                     "threshold; otherwise undecided, i.e. underpowered. The interval shown is the fresh share's, "
                     "minus the threshold."),
}


def _tests_used(results: list[TrialClaimResult]) -> list[str]:
    used = {r.replicated.test for r in results if r.replicated is not None}
    return [f"- {words}" for t, (_, words) in TESTS.items() if t in used]


def _settings_table(results: list[TrialClaimResult]) -> list[str]:
    groups: dict[tuple, list[str]] = {}
    shown: dict[tuple, TrialSettings] = {}
    for r in results:
        s = r.claim.settings
        key = (s.eps, s.alpha, s.ci, s.null, s.seed, s.low, s.high, s.threshold, s.tolerance, r.claim.by)
        groups.setdefault(key, []).append(md_text(r.claim.id))
        shown[key] = s
    rows = []
    for key, ids in groups.items():
        s = shown[key]
        if len(groups) > 1 and len(ids) > 8 and key == max(groups, key=lambda k: len(groups[k])):
            ids = ["every other claim"]
        elif len(groups) == 1:
            ids = ["every claim"]

        def mark(name: str, value: Any, s: TrialSettings = s) -> str:
            return f"{value}" if name in s.given else f"{value} (default)"

        by = key[-1]
        rows.append([", ".join(ids), mark("eps", s.eps), mark("alpha", s.alpha), mark("ci", s.ci),
                     mark("null", s.null), mark("seed", s.seed), "per benchmark" if by == "benchmark" else "pooled",
                     f"[{s.low}, {s.high}] >= {s.threshold}", mark("tolerance", s.tolerance)])
    rows.sort(key=lambda row: row[0] == "every other claim")  # the catch-all row last
    headers = ["claims", "eps", "alpha", "ci", "null", "seed", "cells", "screen band", "tolerance"]
    return [table(rows, headers, Format.markdown).rstrip("\n")]


def _claim_lines(results: list[TrialClaimResult]) -> list[str]:
    out = []
    for r in results:
        c = r.claim
        where = f" ({md_text(c.where)})" if c.where else ""
        text = f"; as printed: \"{md_text(c.text)}\"" if c.text else ""
        if r.mode == RECOMPUTED:
            tail = f"matches {c.printed.show_interval()}"
        else:
            test = TESTS.get(r.replicated.test if r.replicated else "", ("-",))[0]
            tail = f"replicated against the fresh collection for {md_code(c.trials)} ({test}){_compared_on(r)}"
        out.append(f"- {md_code(c.id)}{where}: `{c.metric}` of {c.described(md_text)} in {md_code(c.trials)}, printed {printed_text(r.claim.printed)}, "
                   f"{tail}{text}")
    return out


def trial_sections(t: Trials) -> list[str]:
    """The note's trial sections: claims, settings, replications, the tables read."""
    results = list(t.results)
    notes: dict[str, int] = {}
    rep = t.by_mode()[1]
    rec_table, rep_table = _tables(t, Format.markdown, notes)
    out = ["## Trial claims", "",
           "Figures of the K-trial study, computed by the engine of `replicate items` and `replicate screen` "
           "with the settings below.", ""]
    if rec_table:
        out += ["Recomputed from the released tables, shown in the printed unit with three more decimals than "
                "printed; a value matches when it rounds to the printed one (a value exactly halfway between two "
                "printable values matches either and is flagged a tie), counts and pass/fail when equal.", "", rec_table, ""]
    if rep_table:
        tol = sorted({r.claim.settings.tolerance for r in rep})
        out += ["Replicated: the figure from a fresh collection, judged against the release's figure on the items "
                "both hold (the released table recomputed on them), within the trials' sampling error; the "
                "verdict stands on those items (the printed figure against the whole release is what "
                "recomputing checks; where they differ, the difference carries into the comparison). "
                "**does not replicate**: the 95% interval for fresh - release excludes "
                "0 and, for a claim with a test (p), the test rejects after Holm's correction over the claims "
                "with a test replicated against the same collection (\"Holm p\": the adjusted p; the test's own "
                "is in the JSON), so that a correct paper's claims read \"does not replicate\" by chance at most "
                "5% of the time together, not each. "
                "**replicates**: it lies inside [-tolerance, +tolerance] (tolerance "
                f"{', '.join(tol)} as a fraction, i.e. {', '.join(pct(float(x), 1) for x in tol)} points for "
                "shares and rates), so the fresh data show the two agree to within it. **underpowered**: "
                "neither; the fresh data could not tell a difference of the tolerance from none. \"release\" is "
                "the same figure recomputed from the released table on the shared items, \"n\" the items the "
                "fresh figure is over.", "",
                rep_table, "", *_tests_used(rep), ""]
    out += _claim_lines(results)
    if notes:
        out += ["", "Reasons:", ""] + reasons(notes)
    out += ["", "### Settings", "",
            "Settings that change a figure, from each claim or the `[study]` table (\"default\": neither gives "
            "it; the engine's default is used).", "", *_settings_table(results), ""]
    for report in t.replications:
        out += [f"## Replication: {md_code(report.name)}", "", *collection_lines(report.provenance)]
        if report.agreements:
            out += ["### Item-level agreement", "",
                    "Each cell a claim names, classified in the release (rows) and in the fresh collection "
                    "(columns), over the items both hold.", ""]
            for a in report.agreements:
                out += agreement_lines(a)
    rows = []
    for tb in t.tables:
        rel = tb.file.release if tb.file is not None else None
        check = "-" if tb.file is None or rel is None else (
            "matches manifest" if tb.file.matches_manifest else "DIFFERS from manifest")
        rows.append([md_text(tb.name), tb.role, md_code(rel.repo_path if rel is not None else tb.path), tb.rows,
                     ", ".join(map(md_text, tb.models)), ", ".join(map(md_text, tb.benchmarks)), f"`{tb.provenance.get('sha256', '-')}`", check])
    out += ["## Trials tables", "",
            table(rows, ["name", "role", "file", "rows", "models", "benchmarks", "sha256", "manifest"],
                  Format.markdown).rstrip("\n"), ""]
    w = t.warnings or {}
    if w.get("count"):
        codes = ", ".join(f"{c}: {n}" for c, n in w["by_code"].items())
        shown = w["first"][:20]
        out += [f"Warnings while reading and computing the trials tables: {w['count']} ({codes}).", ""]
        out += [f"- `{x['code']}` {md_text(x['message'])}" for x in shown]
        if w["count"] > len(shown):
            out.append(f"- and {w['count'] - len(shown)} more (all counted in the JSON output)")
        out.append("")
    return out


def _tables(t: Trials, fmt: Format, notes: dict[str, int]) -> tuple[str | None, str | None]:
    """The table of the recomputed claims and that of the replicated ones (None where there is none)."""
    rec, rep = t.by_mode()
    return (checked_table(rec, fmt, notes, withheld=_withheld).rstrip("\n") if rec else None,
            replicated_table(rep, fmt, notes).rstrip("\n") if rep else None)


@dataclass(frozen=True)
class Trials(Part):
    """The trials part: everything checking the trial claims found, as the JSON and the note show it."""

    results: tuple[TrialClaimResult, ...]
    tables: tuple[TableInfo, ...]
    replications: tuple[ReplicationReport, ...] = ()
    warnings: dict[str, Any] = field(default_factory=dict)
    cells: tuple[Any, ...] = ()  # the released cells (trials.results.CellResult) the claims name, for the figure
    name = "trials"

    @property
    def empty(self) -> bool:
        return False  # asked for (claims, or a replication): shown even without claims

    def released_files(self) -> list[FileProvenance]:
        return [t.file for t in self.tables if t.role == "released" and t.file is not None]

    def reproduce_args(self) -> str:
        """The --replication options of the verify command that repeats this check."""
        out = ""
        for tb in self.tables:
            if tb.role == "fresh" and tb.origin == "--replication":
                out += f" --replication {shlex.quote(tb.name + '=' + tb.given)}"
            if tb.role == "fresh" and tb.archive is not None:
                out += f" --replication-archive {shlex.quote(tb.name + '=' + tb.archive)}"
        return out

    def by_mode(self) -> tuple[list[TrialClaimResult], list[TrialClaimResult]]:
        """The recomputed results, then the replicated ones."""
        return [r for r in self.results if r.mode == RECOMPUTED], [r for r in self.results if r.mode == REPLICATED]

    def summary(self) -> dict[str, dict[str, int]]:
        rec, rep = self.by_mode()
        return {RECOMPUTED: counts(rec, [str(v) for v in Verdict]),
                REPLICATED: counts(rep, (REPLICATES, DOES_NOT_REPLICATE, UNDERPOWERED, "not_computable"))}

    def summary_line(self) -> str:
        s = self.summary()
        parts = []
        rec, rep = s[RECOMPUTED], s[REPLICATED]
        n_rec, n_rep = sum(rec.values()), sum(rep.values())
        if n_rec:
            parts.append(matched(rec, "recomputed trial claims match"))
        if n_rep:
            text = (f"{rep['replicates']} of {n_rep} replicated trial claims replicate, "
                    f"{rep['does not replicate']} do not, {rep['underpowered']} underpowered")
            if rep["not_computable"]:
                text += f", {rep['not_computable']} not computable"
            parts.append(text)
        return "; ".join(parts) if parts else "no trial claims"

    def to_json(self) -> dict:
        return {**super().to_json(), "tables": [t.to_json() for t in self.tables],
                "replications": [r.to_json() for r in self.replications], "warnings": self.warnings}

    def summary_note(self) -> list[str]:
        return self.failed_note("Trial claims: none mismatches and none fails to replicate.",
                                "trial claim(s) mismatch or do not replicate")

    def note_sections(self, stage: str, root: str, figures: Any) -> list[str]:
        if stage == "claims":
            return trial_sections(self)
        if stage == "closing" and self.cells:  # P+ and P- beside delta for the cells the claims name
            return figures_section(figures, part="trials")
        return []

    def table(self, fmt: Any) -> list[str]:
        """The terminal view of the trial claims (recomputed, then replicated) with reasons for anything not
        computable."""
        notes: dict[str, int] = {}
        tables = [x for x in _tables(self, fmt, notes) if x is not None]
        return ["\n\n".join(tables), *([""] + reasons(notes) if notes else [])]
