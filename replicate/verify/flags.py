"""What the checks flag for the note's "Flags" section (pure).

- unparsed outputs per run and parser;
- rewritten outputs (records carrying ``original_output``) and skipped lines;
- impossible printed figures (a rate above 100%, a four-cell figure outside
  its kind's range, an MAE beyond the label scale, a correlation outside [-1, 1]);
- runs produced differently: a repeat far beyond the other repeats (the rule of
  ``replicate floor --main``: :meth:`replicate.judge.floor.Floor.far_beyond_repeats`),
  a run pooling files whose outputs sit in different fields, files whose bytes
  no longer match their fetch manifest;
- edges compared on fewer items than a run holds;
- recomputed values exactly on a rounding boundary;
- the loader's warnings.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping, Sequence

from replicate.diagnostics import Diagnostics
from replicate.judge.floor import Floor
from replicate.judge.model import RunFile, extraction_failures
from replicate.judge.run_figures import RunFigures
from replicate.labels import label_name
from replicate.output import pct
from replicate.stats.fourcell import FIGURES
from replicate.verify.claims_file import ClaimsFile
from replicate.verify.part import Flag
from replicate.verify.recompute import EdgeFigures
from replicate.verify.sources.runs import ClaimResult


def _scale(top: int, run_figures: Sequence[RunFigures]) -> str:
    """``0-3``; with the label set's names (``label_name``), ``B>>A..A>>B (0-4)``."""
    sets = {f.label_set for f in run_figures if f.label_max == top and f.label_set is not None}
    named = next((s for s in sets if s.names), None) if len(sets) == 1 else None
    if named is None:
        return f"0-{top}"
    return f"{label_name(0, named)}..{label_name(top, named)} (0-{top})"


#: A printed four-cell figure outside its kind's range (:data:`replicate.stats.fourcell.RANGES`), in words.
_OUT_OF_RANGE = {"rate": "a share cannot be {}", "difference": "a difference of shares cannot be {}",
                 "ratio": "a ratio of rates cannot be negative ({})"}


def _impossible(claims: ClaimsFile, run_figures: Sequence[RunFigures]) -> Iterable[Flag]:
    scale_max = max((f.label_max for f in run_figures if f.label_max is not None), default=None)
    scale = None if scale_max is None else _scale(scale_max, run_figures)
    for c in claims.claims:
        v = Fraction(c.printed.value)
        kind, unit = c.spec.kind, c.printed.unit
        shown = f"{c.printed.text}{'%' if unit == 'percent' else ''}"
        figure = FIGURES.get(c.metric)
        problem = None
        if figure is not None:
            low, high = figure.range
            if not low <= (v / 100 if unit == "percent" else v) <= high:
                problem = _OUT_OF_RANGE[figure.kind].format(shown)
        elif kind == "rate" and unit != "count":
            top = 100 if unit == "percent" else 1
            if not 0 <= v <= top:
                problem = f"a share cannot be {shown}"
        elif c.metric == "pearson" and not -1 <= v <= 1:
            problem = f"a correlation cannot be {c.printed.text}"
        elif c.metric == "mae" and (v < 0 or (scale_max is not None and v > scale_max)):
            problem = f"an MAE of {c.printed.text} is impossible on a {scale} scale"
        if problem:
            yield Flag("impossible", f"claim {c.id!r} ({c.where or c.metric}): {problem}")


def _different_repeats(floors: Sequence[Floor]) -> Iterable[Flag]:
    done = set()
    for f in floors:
        if (f.names, f.parser) in done:
            continue
        done.add((f.names, f.parser))
        for run, mine, others in f.far_beyond_repeats():
            yield Flag(
                "produced_differently",
                f"{run} differs from the other repeats on {pct(float(min(mine)))}-{pct(float(max(mine)))} "
                f"of labels while they differ from each other by {pct(float(min(others)))}-"
                f"{pct(float(max(others)))} ({f.parser}): likely produced with another configuration",
            )


def _files(run_files: Mapping[str, Sequence[RunFile]]) -> Iterable[Flag]:
    for run, files in run_files.items():
        fields = sorted({f.output_field for f in files if f.output_field})
        if len(fields) > 1:
            yield Flag("produced_differently",
                       f"{run} pools files whose outputs sit in different fields ({', '.join(fields)})")
        for f in files:
            p = f.provenance
            if f.rewritten:
                yield Flag("rewritten", f"{run}: {f.rewritten} of {f.records} records in {p.path} were rewritten "
                           "by a retry (they keep the first reply in original_output); the rewritten reply is used")
            if f.skipped:
                yield Flag("skipped", f"{run}: {f.skipped} line(s) of {p.path} were skipped (see warnings)")
            if p.matches_manifest is False:
                yield Flag("hash", f"{p.path} no longer matches its fetch manifest (sha256 {p.sha256} "
                           f"vs {p.release.manifest_sha256})")  # type: ignore[union-attr]
            elif p.release is not None and p.release.manifest_sha256 is None:
                yield Flag("hash", f"{p.path} lies in a fetched directory but is not listed in its manifest")


def _sources(claims: ClaimsFile, run_files: Mapping[str, Sequence[RunFile]]) -> Iterable[Flag]:
    study = claims.study
    releases = {(f.provenance.release.source, f.provenance.release.commit)
                for files in run_files.values() for f in files if f.provenance.release is not None}
    for source, commit in sorted(releases):
        if study.commit and not commit.startswith(study.commit):
            yield Flag("source", f"the claims file names commit {study.commit} but the files were fetched at {commit}")
        if study.release and study.release != source and not source.endswith(study.release):
            yield Flag("source", f"the claims file names release {study.release} but the files come from {source}")


def collect_flags(
    claims: ClaimsFile,
    results: Sequence[ClaimResult],
    run_figures: Sequence[RunFigures],
    edges: Sequence[EdgeFigures],
    floors: Sequence[Floor],
    run_files: Mapping[str, Sequence[RunFile]],
    diagnostics: Diagnostics,
) -> tuple[Flag, ...]:
    flags: list[Flag] = []
    flags.extend(_sources(claims, run_files))
    by_run: dict[str, list[RunFigures]] = {}
    for f in run_figures:
        by_run.setdefault(f.name, []).append(f)
    for name, figs in by_run.items():
        if any(f.unparsed for f in figs):
            parts = [f"{f.unparsed} ({pct(float(f.unparsed_rate or 0))}) under {f.parser}" for f in figs]
            flags.append(Flag("unparsed", f"{name}: outputs left unparsed (of {figs[0].items}): {'; '.join(parts)}"))
    for name, files in run_files.items():
        failed = extraction_failures(files)
        if failed:
            flags.append(Flag("extraction", f"{name}: {failed} documents had no answer extracted ([invalid]); "
                              "dropped under intersect, wrong under wrong"))
    flags.extend(_files(run_files))
    flags.extend(_impossible(claims, run_figures))
    flags.extend(_different_repeats(floors))
    sizes = {f.name: f.items for f in run_figures}
    for e in edges:
        extra_old, extra_new = sizes.get(e.old, 0) - e.shared_items, sizes.get(e.new, 0) - e.shared_items
        if extra_old > 0 or extra_new > 0:
            flags.append(Flag("items", f"{e.old} -> {e.new} is compared on the {e.shared_items} items both runs "
                              f"have; {e.old} has {extra_old} more, {e.new} {extra_new} more"))
    for e in edges:
        if e.small and e.settings is not None:
            flags.append(Flag("small_sample", f"{e.old} -> {e.new} under {e.parser}: only n = {e.cells.n} items "
                              f"compared, fewer than --min-items {e.settings.min_items}: too few for a verdict"))
    for fl in floors:
        for sf in fl.sample_flags:
            flags.append(Flag("small_sample", f"floor of {', '.join(fl.names)} under {fl.parser}: {sf.message}"))
    flags = list(dict.fromkeys(flags))  # an edge under several parsers is reported once
    for r in results:
        for p in r.computed:
            if r.outcome(p).tie:
                flags.append(Flag("tie", f"claim {r.claim.id!r} under {p}: the recomputed value lies exactly on a "
                                  f"rounding boundary of {r.claim.printed.show_interval()}; round-half-even "
                                  "could print the neighbouring value"))
    for code, count in sorted(diagnostics.counts().items()):
        first = next(w for w in diagnostics.warnings if w.code == code)
        flags.append(Flag("warning", f"{count} warning(s) [{code}] while reading, first: {first}"))
    return tuple(flags)
