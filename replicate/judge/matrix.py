"""All-pairs matrices and per-run baselines against gold (pure).

:func:`matrix` aligns the runs on their shared items once, gets the four cells
of every ordered pair from :func:`~replicate.judge.pairs.pair_counts`
(matrix products, no per-pair loop) and evaluates each figure's one
definition (:mod:`replicate.stats.fourcell`) as an ``(n_runs, n_runs)`` array
(row = old, column = new). Per-run baselines (n, EM, MAE, Pearson r against
gold) and the sanity flags of :func:`sanity_flags` come with it.

Baselines are computed over the shared items, so they describe the same items
as the pairs. EM follows the unparsed policy (``intersect``: over the run's
parsed items; ``wrong``: over all shared items, unparsed counted wrong). MAE
and Pearson r need a label, so they are always over the run's parsed items
(``n_scored``), under either policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from replicate.judge.align import Aligned, align
from replicate.judge.compare import Comparison, PairJson, RunSide, joined
from replicate.judge.model import LabelledRun, readonly
from replicate.judge.pairs import PairCounts, Policy, outcomes, pair_counts
from replicate.judge.uncertainty import EdgeUncertainty, Uncertainty, em_intervals, start_edge_uncertainty
from replicate.labels import absent_figures
from replicate.output import pct
from replicate.parsing import UNPARSED
from replicate.stats.bootstrap import Interval
from replicate.stats.cimap import wilson_interval_maps
from replicate.stats.fourcell import FIGURES, REGRESSION_RATE, as_float, edge_figures_json, figure_arrays, figure_names
from replicate.stats.gold import accuracy, mean_absolute_error, pearson_r
from replicate.stats.policy import check_policy

DEFAULT_SCALE = (0, 3)
#: A run's n may lie this share below the largest n before ``n_differs`` is flagged.
N_TOLERANCE = 0.01


def figure_matrices(counts: PairCounts) -> dict[str, np.ndarray]:
    """Each figure shown as a matrix (the view ``matrix`` of :data:`replicate.stats.fourcell.FIGURES`) for every
    ordered pair (read-only arrays, NaN = undefined).

    The definitions are the table's, evaluated over the count arrays, so each
    entry equals the figure of ``counts.cells(i, j)``.
    """
    return {k: readonly(v) for k, v in figure_arrays(counts, figure_names("matrix")).items()}


@dataclass(frozen=True, slots=True)
class Baseline:
    """One run against gold over the shared items.

    ``items``: the run's items before alignment; ``dropped``: those other runs
    lacked; ``n``: items entering EM under the policy; ``n_scored``: parsed
    items, over which MAE and Pearson r are computed.
    """

    name: str
    items: int
    dropped: int
    unparsed: int
    n: int
    correct: int
    n_scored: int
    mae: float | None
    pearson_r: float | None
    em: float | None = None
    labels_outside_scale: int = 0
    gold_outside_scale: int = 0
    distances: bool = True  # False when the labels have no distances (verdicts, categories): no MAE or r
    #: Bootstrap interval of ``em`` (with uncertainty settings; the same clusters as the pairs').
    interval: dict[str, Interval] | None = None

    def to_json(self) -> dict:
        out = {
            "name": self.name,
            "items": self.items,
            "dropped": self.dropped,
            "unparsed": self.unparsed,
            "n": self.n,
            "correct": self.correct,
            "em": self.em,
            "n_scored": self.n_scored,
            "mae": self.mae,
            "pearson_r": self.pearson_r,
            "labels_outside_scale": self.labels_outside_scale,
            "gold_outside_scale": self.gold_outside_scale,
        }
        if self.interval is not None:
            out["interval"] = {k: v.to_json() for k, v in self.interval.items()}
        return out


@dataclass(frozen=True, slots=True)
class Flag:
    """A sanity problem in computed (or printed) figures: what, which run, and why it matters."""

    code: str
    run: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.run}: {self.message} [{self.code}]" if self.run else f"{self.message} [{self.code}]"

    def to_json(self) -> dict:
        return {"code": self.code, "run": self.run, "message": self.message}


def baselines(aligned: Aligned, *, policy: Policy = "intersect", scale: tuple[int, int] = DEFAULT_SCALE) -> tuple[Baseline, ...]:
    """n, EM, MAE and Pearson r of each aligned run against gold (see module doc)."""
    check_policy(policy)
    lo, hi = scale
    gold = aligned.gold
    gold_out = int(np.count_nonzero((gold < lo) | (gold > hi)))
    right, counted = outcomes(aligned, policy)
    out = []
    for k, run in enumerate(aligned.runs):
        labels = aligned.labels[k]
        parsed = labels != UNPARSED
        x, y = labels[parsed], gold[parsed]
        n = int(counted[k].sum())
        correct = int(right[k].sum())
        n_scored = len(x)
        no_distance = bool(absent_figures([run]).get("mae"))
        out.append(
            Baseline(
                name=run.name,
                items=len(run),
                dropped=aligned.dropped[k],
                unparsed=int(np.count_nonzero(~parsed)),
                n=n,
                correct=correct,
                em=as_float(accuracy(correct, n)),
                n_scored=n_scored,
                mae=None if no_distance else as_float(mean_absolute_error(int(np.abs(x.astype(np.int64) - y).sum()), n_scored)),
                pearson_r=None if no_distance else pearson_r(x, y),
                labels_outside_scale=int(np.count_nonzero((x < lo) | (x > hi))),
                gold_outside_scale=gold_out,
                distances=not no_distance,
            )
        )
    return tuple(out)


def _point_figures(aligned: Aligned, policy: Policy, scale: tuple[int, int]) -> tuple[PairCounts, tuple[Baseline, ...]]:
    """Every pair's counts and every run's baseline."""
    return pair_counts(aligned, policy=policy), baselines(aligned, policy=policy, scale=scale)


def sanity_flags(
    runs: Sequence[Baseline], *, scale: tuple[int, int] = DEFAULT_SCALE, n_tolerance: float = N_TOLERANCE
) -> tuple[Flag, ...]:
    """What in a set of baselines cannot be right, or makes the runs incomparable.

    Works on :class:`Baseline` values from any source: computed here, or typed
    in from a printed report. Flags:

    - ``em_outside_unit``: an EM below 0 or above 1;
    - ``mae_above_scale``: an MAE above the label scale's range (hi - lo), which
      labels and gold on that scale cannot produce: a wrong column, a wrong scale
      or misaligned items; also ``mae_negative``;
    - ``labels_outside_scale`` / ``gold_outside_scale``: values off the scale,
      the detectable causes of the above;
    - ``n_differs``: a run whose n lies more than ``n_tolerance`` (a share,
      default 1%) below the largest n: its EM is over materially fewer items
      (under ``intersect`` a few unparsed outputs per run are normal and not
      flagged; a run that ignored the output format is);
    - ``items_differ``: a run with items other runs lack (figures here use the
      shared items only);
    - ``r_undefined``: constant labels, so Pearson r is undefined.
    """
    lo, hi = scale
    span = hi - lo
    flags: list[Flag] = []
    top = max((b.n for b in runs), default=0)
    gold_flagged = False
    for b in runs:
        if b.em is not None and not (0.0 <= b.em <= 1.0):
            flags.append(Flag("em_outside_unit", b.name, f"EM {b.em:.4g} lies outside [0, 1]"))
        if b.mae is not None and b.mae > span:
            flags.append(
                Flag(
                    "mae_above_scale",
                    b.name,
                    f"MAE {b.mae:.4g} exceeds the range {span} of the label scale {lo}-{hi}: "
                    "labels and gold on that scale cannot produce it (wrong column, scale or alignment?)",
                )
            )
        if b.mae is not None and b.mae < 0:
            flags.append(Flag("mae_negative", b.name, f"MAE {b.mae:.4g} is negative"))
        if b.labels_outside_scale:
            flags.append(
                Flag("labels_outside_scale", b.name, f"{b.labels_outside_scale} label(s) outside the scale {lo}-{hi}")
            )
        if b.gold_outside_scale and not gold_flagged:
            gold_flagged = True
            flags.append(
                Flag("gold_outside_scale", None, f"{b.gold_outside_scale} gold grade(s) outside the scale {lo}-{hi}")
            )
        if top and (top - b.n) > n_tolerance * top:
            why = f"{b.unparsed} unparsed" if b.unparsed else "other items"
            flags.append(
                Flag("n_differs", b.name, f"n = {b.n} is {pct((top - b.n) / top, 1)} below the largest n = {top} ({why})")
            )
        if b.dropped:
            flags.append(
                Flag(
                    "items_differ",
                    b.name,
                    f"{b.dropped} of its {b.items} items are missing from other runs; figures use the shared items",
                )
            )
        if b.n_scored >= 2 and b.pearson_r is None and b.distances:
            flags.append(Flag("r_undefined", b.name, "labels or gold are constant: Pearson r is undefined"))
    return tuple(flags)


@dataclass(frozen=True)
class Matrix:
    """Every ordered pair of a set of runs, their baselines and sanity flags."""

    aligned: Aligned
    counts: PairCounts
    baselines: tuple[Baseline, ...]
    flags: tuple[Flag, ...]
    scale: tuple[int, int]
    figures: dict[str, np.ndarray] = field(repr=False)
    #: Sampling error of each ordered pair (row-major, as :meth:`ordered_pairs`), when asked for.
    errors: tuple[EdgeUncertainty, ...] | None = field(default=None, repr=False)
    settings: Uncertainty | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return self.aligned.names

    @property
    def unparsed_policy(self) -> str:
        return self.counts.policy

    @property
    def parser(self) -> str:
        return " + ".join(self.aligned.parsers)

    def ordered_pairs(self) -> list[tuple[int, int]]:
        r = len(self.names)
        return [(i, j) for i in range(r) for j in range(r) if i != j]

    def comparisons(self) -> list[Comparison]:
        """The compare object of every ordered pair (row-major, diagonal left out).

        Same values as :func:`~replicate.judge.compare.comparison_of`, with each
        run's side built once instead of once per pair.
        """
        al, counts = self.aligned, self.counts
        sides = self._sides()
        readers = [r.reader for r in al.runs]  # each run's once, not once per pair
        parsers = [r.parser for r in al.runs]
        pairs = self.ordered_pairs()
        errors = self.errors if self.errors is not None else [None] * len(pairs)
        return [
            Comparison(
                old=sides[i],
                new=sides[j],
                cells=counts.cells(i, j),
                shared_items=al.n_items,
                parser=" + ".join(dict.fromkeys((parsers[i], parsers[j]))),
                unparsed_policy=counts.policy,
                reader=joined(readers[i], readers[j]),
                uncertainty=err,
                settings=self.settings,
            )
            for (i, j), err in zip(pairs, errors)
        ]

    def _sides(self) -> list[RunSide]:
        al = self.aligned
        unparsed = al.unparsed_aligned
        return [RunSide(r.name, len(r), r.unparsed, int(unparsed[k]), r.files) for k, r in enumerate(al.runs)]

    def pairs_json(self) -> list[dict]:
        """The JSON of every ordered pair (:meth:`comparisons`, each :meth:`Comparison.to_json`), with what is the
        same computation for every pair done once over all of them: each figure and each Wilson interval over
        the pairs' cell arrays, each run's side once."""
        pairs = self.ordered_pairs()
        if not pairs:
            return []
        c = self.counts
        old, new = (np.array(k) for k in zip(*pairs))
        cells = SimpleNamespace(**{k: getattr(c, k)[old, new] for k in ("both", "only_old", "only_new", "neither", "changed")})
        labelled = np.array([c.has_labels(i, j) for i, j in pairs], dtype=bool)
        figures = edge_figures_json(cells, labelled)
        level = self.settings.confidence_level if self.settings is not None else 0.95
        wilson = wilson_interval_maps(cells, level)
        sides = [s.to_json() for s in self._sides()]
        return [
            e.to_json(PairJson((sides[i], sides[j]), f, w))
            for e, (i, j), f, w in zip(self.comparisons(), pairs, figures, wilson)
        ]

    def difficulty_matrix(self) -> np.ndarray:
        """Regression rate over the rate expected from errors independent given item difficulty (NaN where unavailable)."""
        r = len(self.names)
        out = np.full((r, r), np.nan)
        reg = self.figures[REGRESSION_RATE.name]
        if self.errors is not None:
            for (i, j), err in zip(self.ordered_pairs(), self.errors):
                exp = err.difficulty_expected
                if exp:
                    out[i, j] = reg[i, j] / exp
        return out

    @property
    def shared_items(self) -> int:
        """The items every run has (what every figure is over)."""
        return self.aligned.n_items

    def to_json(self) -> dict:
        return {
            "runs": [b.to_json() for b in self.baselines],
            "pairs": self.pairs_json(),
            "flags": [f.to_json() for f in self.flags],
            "shared_items": self.aligned.n_items,
            "parser": self.parser,
            "reader": " + ".join(self.aligned.readers),
            "unparsed_policy": self.unparsed_policy,
            "scale": {"min": self.scale[0], "max": self.scale[1]},
            "uncertainty": None if self.settings is None else self.settings.to_json(),
            **({"absent": self.absent} if self.absent else {}),
        }

    @property
    def absent(self) -> dict[str, str]:
        """Figures these runs cannot give (label figures of verdict runs, MAE/r of categories), with why."""
        return absent_figures(self.aligned.runs)


def matrix(
    runs: Sequence[LabelledRun],
    *,
    policy: Policy | None = None,
    scale: tuple[int, int] = DEFAULT_SCALE,
    n_tolerance: float = N_TOLERANCE,
    uncertainty: Uncertainty | None = None,
) -> Matrix:
    """All ordered pairs of ``runs`` over their shared items, with baselines and flags.

    With ``uncertainty`` settings every pair gets bootstrap intervals (one
    bootstrap for all pairs; none with 0 replicates), the clustered McNemar
    test and the difficulty baseline, and a pair on fewer than ``min_items``
    items a ``small_sample`` flag. ``policy`` None: the runs' source rule
    (:func:`~replicate.judge.sourcerule.unparsed_choice`), as the command's default.
    """
    from replicate.judge.sourcerule import unparsed_choice

    policy = unparsed_choice(runs, policy).policy
    lo, hi = scale
    if not 0 <= n_tolerance < 1:
        raise ValueError(f"n_tolerance must be a share in [0, 1); got {n_tolerance!r}")
    if lo > hi:
        raise ValueError(f"scale must be (lo, hi) with lo <= hi; got {scale!r}")
    aligned = align(runs)
    errors = None
    if uncertainty is None:
        counts, base = _point_figures(aligned, policy, scale)
        flags = sanity_flags(base, scale=scale, n_tolerance=n_tolerance)
    else:
        r = len(aligned.runs)
        pairs = [(i, j) for i in range(r) for j in range(r) if i != j]
        clusters = uncertainty.clusters(aligned.keys)  # once, for the runs' EM and the edges
        # the edges' difficulty refits start first (in a child process where that is safe, see
        # start_edge_uncertainty); the point figures and the runs' EM intervals are computed here meanwhile
        pending = start_edge_uncertainty(aligned, pairs, uncertainty, policy=policy, clusters=clusters)
        counts, base = _point_figures(aligned, policy, scale)
        if uncertainty.resampled:
            em = em_intervals(aligned, uncertainty, policy=policy, clusters=clusters)
            base = tuple(replace(b, interval={"em": iv}) for b, iv in zip(base, em))
        errors = tuple(pending.result())
        flags = sanity_flags(base, scale=scale, n_tolerance=n_tolerance)
        n = counts.n
        small = [(i, j) for i, j in pairs if n[i, j] < uncertainty.min_items]
        if small:
            shown = ", ".join(f"{aligned.names[i]} -> {aligned.names[j]} (n = {int(n[i, j])})" for i, j in small[:5])
            more = f" and {len(small) - 5} more" if len(small) > 5 else ""
            flags = (*flags, Flag(
                "small_sample", None,
                f"{len(small)} pair(s) compared on fewer than --min-items {uncertainty.min_items} items: {shown}{more}; "
                "too few for a verdict " + (
                    "(read the intervals)" if uncertainty.resampled else "(no intervals computed: --replicates 0)"),
            ))
    figures = dict(figure_matrices(counts))
    if any(counts.unlabelled):  # a figure needing labels needs them on both sides
        for name in [f for f in figures if FIGURES[f].needs_labels]:
            values = figures[name].copy()
            for i in range(len(runs)):
                for j in range(len(runs)):
                    if not counts.has_labels(i, j):
                        values[i, j] = np.nan
            figures[name] = readonly(values)
    return Matrix(aligned, counts, base, flags, scale, figures, errors, uncertainty)
