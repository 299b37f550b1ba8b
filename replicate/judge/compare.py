"""Edges between runs: the compare object every command and the note share (pure)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final, Iterable, Literal, Mapping, Sequence

from replicate.diagnostics import Diagnostics
from replicate.judge.align import Aligned, align
from replicate.judge.model import LabelledRun, RunFile, extraction_failures
from replicate.judge.pairs import PairCounts, Policy, pair_counts
from replicate.judge.uncertainty import EXACT_MCNEMAR_ASSUMES, EdgeUncertainty, Uncertainty, edge_uncertainty
from replicate.labels import absent_figures
from replicate.stats.bootstrap import Interval
from replicate.stats.cimap import edge_ci
from replicate.stats.fourcell import FIGURES, FourCell

if TYPE_CHECKING:
    from replicate.judge.agreement import AgreementRow
    from replicate.judge.harness import HarnessCheck
    from replicate.judge.sourcerule import UnparsedChoice


@dataclass(frozen=True)
class RunSide:
    """One side of an edge: the run's name, its files and how many items it had/left unparsed."""

    name: str
    items: int
    unparsed: int
    unparsed_shared: int
    files: tuple[RunFile, ...]

    @property
    def extraction_failures(self) -> int | None:
        """Of :attr:`unparsed`, the items whose answer the file's own extraction did not find (None: not told)."""
        return extraction_failures(self.files)

    def to_json(self) -> dict:
        out = {
            "name": self.name,
            "items": self.items,
            "unparsed": self.unparsed,
            "unparsed_shared": self.unparsed_shared,
            "files": [f.to_json() for f in self.files],
        }
        failed = self.extraction_failures
        if failed is not None:
            out["extraction_failures"] = failed
        return out


@dataclass(frozen=True)
class Comparison:
    """An edge old -> new: its four cells (with label changes), unparsed counts and provenance.

    Every figure comes from ``cells`` (:class:`~replicate.stats.fourcell.FourCell`).
    With ``uncertainty`` (computed when the edge was asked for with
    :class:`~replicate.judge.uncertainty.Uncertainty` settings), McNemar has a
    clustered counterpart and, unless the settings resample nothing, each
    figure a bootstrap interval.
    """

    old: RunSide
    new: RunSide
    cells: FourCell
    shared_items: int
    parser: str
    unparsed_policy: Policy
    reader: str = "-"  # the reader(s) of both sides' files
    uncertainty: EdgeUncertainty | None = None
    settings: Uncertainty | None = None
    #: old vs gold, new vs gold, old vs new (replicate.judge.agreement.edge_agreement), when asked for
    agreement: tuple[AgreementRow, ...] | None = None
    #: how the unparsed policy was chosen: the source's rule by default, or the user's departure from it
    unparsed_choice: UnparsedChoice | None = None
    #: the harness's own figures of each side (over that side's items) beside the recomputed accuracy
    harness: tuple[HarnessCheck, ...] = ()
    #: the warnings met loading the runs (:attr:`LabelledRun.diagnostics`), the JSON's ``warnings`` as the command's
    diagnostics: Diagnostics | None = field(default=None, compare=False, repr=False)

    @property
    def small(self) -> bool:
        """Compared on fewer items than the settings' ``min_items``."""
        return self.settings is not None and self.cells.n < self.settings.min_items
    absent: Mapping[str, str] = field(default_factory=dict)  # figure -> why these runs cannot give it

    @property
    def changed(self) -> int:
        """Items whose two labels differ."""
        return int(self.cells.changed or 0)

    @property
    def change_rate(self) -> float | None:
        return self.cells.change_rate

    def ci(self, wilson: Mapping[str, Interval] | None = None) -> dict[str, dict]:
        """Every interval of every figure by method, with the default named (:mod:`replicate.stats.cimap`);
        ``wilson``: the edge's Wilson intervals when already computed."""
        u, st = self.uncertainty, self.settings
        bootstrap = u.interval if u is not None and st is not None and u.resampled else None
        return edge_ci(self.cells, bootstrap, st.confidence_level if st is not None else 0.95, wilson)

    def to_json(self, known: PairJson | None = None) -> dict:
        """The edge as JSON; ``known``: parts already computed for many edges at once (``matrix``'s pairs)."""
        sides = (self.old.to_json(), self.new.to_json()) if known is None else known.sides
        figures = self.cells.figures() if known is None else known.figures
        out: dict[str, Any] = {"old": sides[0], "new": sides[1]}
        absent = self.absent
        out.update(figures)
        out.update(
            changed=self.changed if self.cells.changed is not None else None,
            unparsed={"old": self.old.unparsed, "new": self.new.unparsed},
            shared_items=self.shared_items,
            parser=self.parser,
            reader=self.reader,
            unparsed_policy=self.unparsed_policy,
        )
        if self.unparsed_choice is not None:
            out["unparsed_rule"] = self.unparsed_choice.to_json()
        if self.harness:
            out["harness"] = [h.to_json() for h in self.harness]
        out["mcnemar_assumes"] = EXACT_MCNEMAR_ASSUMES
        out["ci"] = self.ci(None if known is None else known.wilson)
        if self.uncertainty is not None and self.settings is not None:
            u = self.uncertainty
            out["mcnemar_clustered"] = u.mcnemar_json()
            out["independence_baselines"] = u.baselines_json(self.cells if known is None else SimpleNamespace(**figures))
            out["uncertainty"] = self.settings.to_json()
            out["small_sample"] = self.small
        if absent:
            out["absent"] = absent
        if self.agreement is not None:
            out["agreement"] = {f"{r.left}_{r.right}": r.to_json() for r in self.agreement}
        if self.diagnostics is not None:
            out["warnings"] = self.diagnostics.to_json()
        return out


@dataclass(frozen=True, slots=True)
class PairJson:
    """Parts of an edge's JSON computed beforehand, for many edges at once: both sides' JSON,
    :meth:`FourCell.figures` (:func:`~replicate.stats.fourcell.edge_figures_json`) and the Wilson intervals
    (:func:`~replicate.stats.cimap.wilson_interval_maps`)."""

    sides: tuple[dict, dict]
    figures: dict
    wilson: Mapping[str, Interval]


def _side(aligned: Aligned, i: int) -> RunSide:
    run = aligned.runs[i]
    return RunSide(run.name, len(run), run.unparsed, int(aligned.unparsed_aligned[i]), run.files)


def comparison_of(
    aligned: Aligned,
    counts: PairCounts,
    i: int,
    j: int,
    *,
    uncertainty: EdgeUncertainty | None = None,
    settings: Uncertainty | None = None,
) -> Comparison:
    """The edge from run i to run j of an aligned set, from its pre-computed pair counts."""
    parser = " + ".join(dict.fromkeys((aligned.runs[i].parser, aligned.runs[j].parser)))
    return Comparison(
        old=_side(aligned, i),
        new=_side(aligned, j),
        cells=counts.cells(i, j),
        shared_items=aligned.n_items,
        parser=parser,
        unparsed_policy=counts.policy,
        reader=pair_reader(aligned, i, j),
        uncertainty=uncertainty,
        settings=settings,
        absent=_absent_pair(aligned, i, j),
    )


def _absent_pair(aligned: Aligned, i: int, j: int) -> dict[str, str]:
    """The label figures an edge cannot give (MAE and Pearson r are not edge figures)."""
    absent = absent_figures([aligned.runs[i], aligned.runs[j]])
    return {k: v for k, v in absent.items() if k in FIGURES and FIGURES[k].needs_labels}


def pair_reader(aligned: Aligned, i: int, j: int) -> str:
    """The readers of runs i and j, each once (``a + b`` when they differ)."""
    return joined(aligned.runs[i].reader, aligned.runs[j].reader)


@functools.lru_cache(maxsize=256)
def joined(*names: str) -> str:
    """Names joined by `` + ``, each once in order of appearance (a name may itself be ``a + b``)."""
    return " + ".join(dict.fromkeys(n for name in names for n in name.split(" + ")))


def edges(
    aligned: Aligned,
    pairs: Iterable[tuple[int, int]],
    *,
    policy: Policy = "intersect",
    uncertainty: Uncertainty | None = None,
) -> list[Comparison]:
    """Comparisons for the given (old, new) index pairs, computed in one pass.

    With ``uncertainty`` settings, one bootstrap gives every edge its intervals.
    """
    pairs = list(pairs)
    counts = pair_counts(aligned, policy=policy)
    errors: list[EdgeUncertainty | None] = [None] * len(pairs)
    if uncertainty is not None and pairs:
        errors = list(edge_uncertainty(aligned, pairs, uncertainty, policy=policy))
    return [
        comparison_of(aligned, counts, i, j, uncertainty=err, settings=uncertainty)
        for (i, j), err in zip(pairs, errors)
    ]


#: ``uncertainty="default"``: the command's settings (:class:`Uncertainty`'s defaults, the runs' key names)
DEFAULT: Final = "default"


def settings_for(runs: Sequence[LabelledRun], uncertainty: Uncertainty | Literal["default"] | None) -> Uncertainty | None:
    """``uncertainty`` itself, or for :data:`DEFAULT` the default settings over the runs' key names.

    The defaults are the commands' (1000 replicates, seed 0, the first key field of two or more as
    cluster, 100 items at least): the library and ``replicate compare`` give the same figures.
    """
    if not isinstance(uncertainty, str):
        return uncertainty
    if uncertainty != DEFAULT:
        raise ValueError(f"uncertainty must be Uncertainty settings, None or {DEFAULT!r}; got {uncertainty!r}")
    names = next((r.key_names for r in runs if r.key_names), None)
    return Uncertainty(key_fields=names) if names else Uncertainty()


#: Why a comparison of verdicts has no agreement block.
VERDICT_AGREEMENT = ("these runs carry verdicts (right or wrong), not labels: their gold is the constant "
                     "'correct', not a label scale, so kappa, pi and alpha against it mean nothing; "
                     "the four cells are the comparison")


def compare(
    old: LabelledRun, new: LabelledRun, *, policy: Policy | None = None,
    uncertainty: Uncertainty | Literal["default"] | None = DEFAULT, agreement: bool = True,
) -> Comparison:
    """The edge old -> new over the items both runs have, as ``replicate compare`` computes it.

    ``policy``: the unparsed policy (None: the source's rule of the runs' readers, else intersect;
    :func:`~replicate.judge.sourcerule.unparsed_choice`). ``uncertainty``: bootstrap settings
    (:data:`DEFAULT`: the command's; None: no intervals, no clustered McNemar, no small-sample flag).
    With ``agreement``, also the agreement figures of old and new with gold and with each other (the
    same bootstrap settings); runs of verdicts have none (gold is a constant), ``absent`` says why.
    """
    from replicate.judge.harness import harness_checks
    from replicate.judge.sourcerule import unparsed_choice

    choice = unparsed_choice([old, new], policy)
    settings = settings_for([old, new], uncertainty)
    aligned = align([old, new])
    cmp = edges(aligned, [(0, 1)], policy=choice.policy, uncertainty=settings)[0]
    checks = tuple(h for run in (old, new) for h in harness_checks(run, choice.policy))
    cmp = replace(cmp, unparsed_choice=choice, harness=checks, diagnostics=warnings_of([old, new]))
    if not agreement or aligned.n_items == 0:
        return cmp
    if "verdicts" in (old.yields, new.yields):
        return replace(cmp, absent={**cmp.absent, "agreement": VERDICT_AGREEMENT})
    from replicate.judge.agreement import edge_agreement

    return replace(cmp, agreement=edge_agreement(aligned, 0, 1, policy=choice.policy, settings=settings))


def warnings_of(runs: Sequence[LabelledRun]) -> Diagnostics | None:
    """The warnings of the loads the runs came from: their one load's (the same object, so a warning added
    later shows too), or those of several loads together; None when no run says."""
    loads = list({id(d): d for r in runs if (d := r.diagnostics) is not None}.values())
    if len(loads) <= 1:
        return loads[0] if loads else None
    return Diagnostics(warnings=[w for d in loads for w in d.warnings])


def chain(
    runs: Sequence[LabelledRun], *, policy: Policy | None = None,
    uncertainty: Uncertainty | Literal["default"] | None = DEFAULT,
) -> list[Comparison]:
    """Every adjacent edge of a version line, over the items all runs share (``policy`` and ``uncertainty`` as in
    :func:`compare`)."""
    from replicate.judge.sourcerule import unparsed_choice

    choice = unparsed_choice(runs, policy)
    settings = settings_for(runs, uncertainty)
    aligned = align(runs)
    found = edges(aligned, [(i, i + 1) for i in range(len(runs) - 1)], policy=choice.policy, uncertainty=settings)
    return [replace(e, unparsed_choice=choice) for e in found]
