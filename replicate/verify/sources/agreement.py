"""The ``agreement.*`` verify metrics: kappa, Scott's pi, alpha, tau-b and rho of a run against gold or of two runs.

Each claim is computed exactly as ``replicate agreement`` computes the figure
(:func:`replicate.judge.agreement.agreement_rows`): the runs aligned on their
shared items, the value domain from the runs' label sets and every label and
gold grade seen, unparsed outputs under the claim's ``unparsed`` policy
(``intersect``: an item unparsed on either side leaves the pair; ``wrong``: it
stays in the nominal figures as a label of its own). A claim with
``run = "NAME"`` is the run against gold (``replicate agreement NAME --gold
...``); one with ``old`` and ``new`` is the two runs against each other, on the
domain ``replicate compare`` uses (gold grades included where the runs have
gold), as ``compare``'s JSON ``agreement`` row ``old`` vs ``new`` gives it.

Fields: ``binarize`` (every figure; a label ``>= t`` is 1), ``weights``
(``agreement.cohen_kappa``: none, linear, quadratic), ``level``
(``agreement.krippendorff_alpha``: nominal, ordinal, interval, ratio).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from replicate.judge.agreement import GOLD, AgreementRow, agreement_rows
from replicate.judge.align import align
from replicate.judge.model import NO_GOLD
from replicate.stats.agreement import LEVELS, WEIGHTS, Figure
from replicate.verify.matching import Computed
from replicate.verify.metric_row import Field, Metric, one_of

PREFIX = "agreement."


def _threshold(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be a whole-number threshold (a label >= it is 1), got {value!r}"
    return None


BINARIZE = Field("binarize", _threshold, None, "a label >= the threshold is 1, else 0 (default: labels as read)")
WEIGHTS_FIELD = Field("weights", one_of(WEIGHTS), "none", "disagreement weights: none, linear, quadratic")
LEVEL_FIELD = Field("level", one_of(LEVELS), "nominal", "level of measurement: nominal, ordinal, interval, ratio")

#: figure -> (meaning, its own fields)
FIGURE_ROWS: dict[str, tuple[str, tuple[Field, ...]]] = {
    "cohen_kappa": ("Cohen's kappa (weights none/linear/quadratic)", (WEIGHTS_FIELD, BINARIZE)),
    "scott_pi": ("Scott's pi (chance from the pooled label shares)", (BINARIZE,)),
    "krippendorff_alpha": ("Krippendorff's alpha (level nominal/ordinal/interval/ratio)", (LEVEL_FIELD, BINARIZE)),
    "kendall_tau": ("Kendall's tau-b between the label vectors", (BINARIZE,)),
    "spearman": ("Spearman's rho between the label vectors", (BINARIZE,)),
}

def figure_of(claim: Any) -> Figure:
    """The :class:`Figure` a claim names: its metric's figure with the claim's weights, level and binarize."""
    name = claim.metric[len(PREFIX):]
    opts = claim.options
    return Figure(name, weights=opts.get("weights") if name == "cohen_kappa" else None,
                  level=opts.get("level") if name == "krippendorff_alpha" else None, binarize=opts.get("binarize"))


def _row(core: Any, claim: Any, parser: str, binarize: int | None) -> AgreementRow | str:
    """The agreement row the claim reads, or why there is none (once per runs, parser, policy and reading)."""
    names = claim.run_names

    def make() -> AgreementRow | str:
        aligned = align([core.labelled(n, parser) for n in names])
        has_gold = bool(np.any(aligned.gold != NO_GOLD))
        if claim.scope == "run" and not has_gold:
            return f"{claim.run} has no gold labels on its items"
        if aligned.n_items == 0:
            return f"{' and '.join(names)} share no items"
        # against gold; two runs as compare reads them: gold grades (where there are) enter the value domain
        pairs = [(0, GOLD)] if claim.scope == "run" else ([(0, GOLD)] if has_gold else []) + [(0, 1)]
        rows = agreement_rows(aligned, pairs, thresholds=() if binarize is None else (binarize,), policy=claim.policy)
        return next(r for r in reversed(rows) if r.binarize == binarize)

    return core.cached_or_why(("agreement", names, parser, claim.policy, binarize), make)


def compute(core: Any, claim: Any, parser: str) -> Computed:
    """The claim's agreement figure under ``parser`` (see the module docstring)."""
    fig = figure_of(claim)
    row = _row(core, claim, parser, fig.binarize)
    if isinstance(row, str):
        return Computed(None, row)
    value = row.values[fig.column]
    n = row.counted[fig.column]
    if value is None:
        why = row.absent.get(fig.column) or (
            f"undefined on these {n} items (no pairs, or a side constant"
            f"{'' if fig.binarize is None else f' once binarized at {fig.binarize}'})")
        return Computed(None, why, n=n)
    return Computed(value, n=n)


def _metric(name: str) -> Metric:
    meaning, fields = FIGURE_ROWS[name]
    return Metric(PREFIX + name, "runs", ("run", "edge"), "number",
                  f"{meaning}: a run against gold (run) or two runs (old, new), as `replicate agreement`",
                  fields=fields, compute=compute)


#: The family's rows (the table, :mod:`replicate.verify.metrics`, imports them).
METRICS = tuple(_metric(name) for name in FIGURE_ROWS)
