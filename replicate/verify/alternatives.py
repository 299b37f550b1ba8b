"""Which definition a printed number used: alternative definitions of a mismatching claim that reproduce it (pure).

When a claim over runs mismatches under its gating parser, the verifier
varies the claim along the axes of :data:`FAMILIES` (a declared table, the one
place the alternatives are defined) and lists every variant whose value
matches the printed one at its printed precision (the same
:func:`~replicate.printed.match` as the claim itself). Each variant is
a claim of the one claim model, recomputed through the same metric table
(``Recomputer.compute``): no figure is implemented twice. The verdict stays
``mismatch``: an explanation is not a match.

Variants are the product of the axes (each axis lists the claim's own
setting first); the claim itself is left out. The unit axis re-reads the
printed text and costs no recomputation; the others cost one each, cached by
reading, and at most :data:`MAX_RECOMPUTATIONS` are made per claim (in table
order; ``tried`` records how many were).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from replicate.errors import ReplicateError
from replicate.judge.agreement import value_domain
from replicate.judge.align import align
from replicate.judge.outofscale import OUT_OF_SCALE
from replicate.printed import Printed, Verdict, match
from replicate.stats.fourcell import same_count
from replicate.verify.claim import Claim
from replicate.verify.metrics import metric as find_metric

#: At most this many recomputations per mismatching claim.
MAX_RECOMPUTATIONS = 1024

_KAPPA = [("agreement.cohen_kappa", {"weights": w}) for w in ("none", "linear", "quadratic")]
_ALPHA = [("agreement.krippendorff_alpha", {"level": lv}) for lv in ("nominal", "ordinal", "interval", "ratio")]

Group = tuple[tuple[str, Mapping[str, Any]], ...]

#: Agreement metrics that are read for one another: each group's members (with their own settings).
AGREEMENT_GROUPS: tuple[Group, ...] = (
    (*_KAPPA, ("agreement.scott_pi", {}), *_ALPHA),
    (("agreement.kendall_tau", {}), ("agreement.spearman", {})),
)


def metric_groups() -> tuple[Group, ...]:
    """Metrics that are read for one another: the agreement groups, then each group of four-cell proportions
    counting the same items over different denominators (:func:`replicate.stats.fourcell.same_count`)."""
    return AGREEMENT_GROUPS + tuple(tuple((name, {}) for name in group) for group in same_count())

Setting = dict[str, Any]  # keys: metric, options (merged), unparsed, out_of_scale, parser, unit


@dataclass(frozen=True)
class Family:
    """One axis of alternatives: ``settings(claim, ctx)`` lists its settings, the claim's own first."""

    name: str
    doc: str
    settings: Callable[[Claim, Ctx], list[Setting]]


@dataclass(frozen=True)
class Ctx:
    core: Any  # the Recomputer
    parser: str  # the gating parser
    installed: Sequence[str]  # every installed parser


def _metrics(c: Claim, ctx: Ctx) -> list[Setting]:
    mine = {k: c.options[k] for k in ("weights", "level") if k in c.options}
    own: Setting = {"metric": c.metric, "options": mine}
    for group in metric_groups():
        if any(name == c.metric and all(c.options.get(k) == v for k, v in opts.items()) for name, opts in group):
            others = [(n, dict(o)) for n, o in group if (n, dict(o)) != (c.metric, mine)]
            fits = [(n, o) for n, o in others if (m := find_metric(n)) is not None and c.scope in m.scopes]
            return [own, *({"metric": n, "options": o} for n, o in fits)]
    return [own]


def _thresholds(c: Claim, ctx: Ctx) -> list[Setting]:
    if "binarize" not in c.options:
        return [{}]
    try:
        domain, ordered = value_domain(align([ctx.core.labelled(n, ctx.parser) for n in c.run_names]),
                                       with_gold=True)
    except ReplicateError:
        return [{}]
    own = c.options["binarize"]
    ts = [None, *domain[1:]] if ordered else [None]
    return [{"binarize": own}, *({"binarize": t} for t in ts if t != own)]


def _policies(c: Claim, ctx: Ctx) -> list[Setting]:
    return [{"unparsed": p} for p in (c.policy, *({"intersect", "wrong"} - {c.policy}))]


def _out_of_scale(c: Claim, ctx: Ctx) -> list[Setting]:
    """The command's out-of-scale policy, then the others when a run of the claim has a label outside its scale."""
    own = ctx.core.out_of_scale
    try:
        stray = any(ctx.core.scale_outcome(n, ctx.parser).count for n in c.run_names)
    except ReplicateError:
        stray = False
    return [{"out_of_scale": own}, *({"out_of_scale": p} for p in OUT_OF_SCALE if p != own and stray)]


def _parsers(c: Claim, ctx: Ctx) -> list[Setting]:
    if any(ctx.core.runs[n].labels is not None for n in c.run_names):  # decided labels: no parser reads them
        return [{"parser": ctx.parser}]
    return [{"parser": ctx.parser}, *({"parser": p} for p in ctx.installed if p != ctx.parser)]


def _units(c: Claim, ctx: Ctx) -> list[Setting]:
    p = c.printed
    other = {"percent": ("fraction",), "fraction": ("percent",), "ratio": ("percent",)}.get(p.unit, ())
    return [{"unit": p.unit}, *({"unit": u} for u in other)]


#: The alternatives tried, in order (docs/verify.md, "Alternatives").
FAMILIES: tuple[Family, ...] = (
    Family("metric", "kappa (weights none, linear, quadratic) <-> Scott's pi <-> Krippendorff's alpha (every level); "
           "Kendall's tau-b <-> Spearman's rho; four-cell proportions of the same count over another denominator "
           "(a regression rate over all shared items <-> over the items old got right)", _metrics),
    Family("binarize", "agreement figures: labels as read, and binarized at every threshold of the value domain",
           _thresholds),
    Family("unparsed", "the unparsed policy: intersect (parsed items) <-> wrong (all items)", _policies),
    Family("out_of_scale", "labels outside the scale: keep <-> drop <-> clip (when a run of the claim has one)",
           _out_of_scale),
    Family("parser", "every installed parser (not for runs whose labels are decided)", _parsers),
    Family("unit", "the printed text read as percent <-> fraction (a ratio read as a percent)", _units),
)


@dataclass(frozen=True)
class Alternative:
    """A variant of a claim (``settings``: what defines it beside the metric) that reproduces the printed value."""

    metric: str
    settings: dict[str, Any]
    value: float
    changes: int  # axes on which it differs from the claim

    def to_json(self) -> dict:
        return {"metric": self.metric, "settings": dict(self.settings), "value": self.value}


@dataclass(frozen=True)
class Alternatives:
    found: tuple[Alternative, ...]
    tried: int  # recomputations made


def _variants(c: Claim, ctx: Ctx) -> Iterator[tuple[int, Setting]]:
    axes = [f.settings(c, ctx) for f in FAMILIES]
    for combo in itertools.product(*(enumerate(a) for a in axes)):
        yield sum(i != 0 for i, _ in combo), {k: v for _, s in combo for k, v in s.items()}


def alternatives(core: Any, claim: Claim, parser: str, installed: Sequence[str]) -> Alternatives:
    """The variants of ``claim`` (computed under ``parser``) whose value matches its printed text."""
    if claim.source != "runs" or not isinstance(claim.printed, Printed):
        return Alternatives((), 0)
    ctx = Ctx(core, parser, tuple(installed))
    own = {"unparsed": claim.policy, "out_of_scale": core.out_of_scale, "parser": parser, "unit": claim.printed.unit}
    computed: dict[tuple, Any] = {}
    found = []
    for changes, s in _variants(claim, ctx):
        if changes == 0:
            continue
        spec = find_metric(s["metric"], "runs")
        if spec is None:
            continue
        options = {f.name: s["options"].get(f.name, s.get(f.name, claim.options.get(f.name, f.default)))
                   for f in spec.fields}
        key = (spec.name, tuple(sorted(options.items(), key=str)), s["unparsed"], s["out_of_scale"], s["parser"])
        if key not in computed:
            if len(computed) >= MAX_RECOMPUTATIONS:
                break
            alt = replace(claim, metric=spec.name, spec=spec, options=options, unparsed=s["unparsed"])
            try:
                computed[key] = core.under(s["out_of_scale"]).compute(alt, s["parser"]).value
            except ReplicateError:
                computed[key] = None
        value = computed[key]
        if value is None or isinstance(value, bool):
            continue
        try:
            printed = Printed.parse(claim.printed.text, s["unit"])
        except ValueError:
            continue
        if match(printed, value).verdict is not Verdict.match:
            continue
        settings = {**options, **{k: s[k] for k, v in own.items() if s[k] != v}}  # each axis where it departs
        found.append(Alternative(spec.name, settings, float(value), changes))
    found.sort(key=lambda a: a.changes)  # stable: table order within as many changes
    return Alternatives(_simplest(found), len(computed))


def _simplest(found: list[Alternative]) -> tuple[Alternative, ...]:
    """Leave out a variant that only adds settings to a kept one of the same value (``unparsed = wrong``
    over runs with no unparsed item reproduces whatever ``intersect`` does)."""
    kept: list[Alternative] = []
    for a in found:
        if not any(k.metric == a.metric and k.value == a.value and k.settings.items() <= a.settings.items()
                   for k in kept):
            kept.append(a)
    return tuple(kept)


# -- in words ----------------------------------------------------------------------------------
OUT_OF_SCALE_WORDS = {"keep": "labels outside the scale kept as read (--out-of-scale keep)",
                      "drop": "items labelled outside the scale dropped (--out-of-scale drop)",
                      "clip": "labels outside the scale clipped to it (--out-of-scale clip)"}
FIGURE_WORDS = {"cohen_kappa": "Cohen's kappa", "scott_pi": "Scott's pi", "krippendorff_alpha": "Krippendorff's alpha",
                "kendall_tau": "Kendall's tau-b", "spearman": "Spearman's rho"}
#: How each setting reads, in the order shown (one not given, or weights "none", is not shown).
SETTING_WORDS = {"weights": "weights {}", "level": "{}", "binarize": "binarized at {}", "unparsed": "unparsed policy {}",
                 "out_of_scale": "{}", "parser": "parser `{}`", "unit": "printed value read as {}"}


def describe(metric: str, settings: Mapping[str, Any]) -> str:
    """A metric and its settings in words: ``Krippendorff's alpha, ordinal, binarized at 1``."""
    parts = [FIGURE_WORDS.get(metric.removeprefix("agreement."), f"`{metric}`")]
    for key, words in SETTING_WORDS.items():
        if (value := settings.get(key)) not in (None, "none"):
            parts.append(words.format(OUT_OF_SCALE_WORDS[value] if key == "out_of_scale" else value))
    return ", ".join(parts)


def note_line(claim: Claim, found: Sequence[Alternative]) -> str:
    """``printed as Cohen's kappa, binarized at 1 = 0.4094; reproduced by ...`` (one line).

    Variants of one figure that differ only in weights or level and give the same value (on binarized
    labels every level coincides) share one entry: ``Krippendorff's alpha, nominal / ordinal, ...``."""
    own = describe(claim.metric, {k: v for k, v in claim.options.items()})
    groups: dict[tuple, list[Alternative]] = {}
    for a in found:
        rest = tuple((k, v) for k, v in a.settings.items() if k not in ("weights", "level"))
        groups.setdefault((a.metric, a.value, rest), []).append(a)
    shown = []
    for (metric, value, rest), alts in groups.items():
        settings: dict[str, Any] = dict(rest)
        for k in ("weights", "level"):
            if k in alts[0].settings:
                settings[k] = " / ".join(str(a.settings[k]) for a in alts)
        shown.append(f"{describe(metric, settings)} = {value:.6f}")
    return f"printed as {own} = {claim.printed.text}; reproduced by {'; '.join(shown)}"
