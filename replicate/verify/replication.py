"""Replicated trial claims: a fresh collection's figure against the release's on the same items.

Like is compared with like: the released table is restricted to the
(benchmark, item) units both tables hold and run through the same engine
(``NAME@shared``), so both figures, and both sides' item classifications
(with their BH family), stand on the same items. The printed figure against
the whole release is what recomputing checks; the replicated verdict is about
the shared items (:class:`ComparedOn` says how many of the release's); the
tables restricted to them come from :mod:`replicate.trials.fresh`.

The statistics (intervals, the tests, the verdict rule) are
:mod:`replicate.stats.replication`, applied per kind of figure by
:mod:`replicate.stats.figure_comparison`; this module picks the right one for
each metric family (see :mod:`replicate.verify.metrics`) and reads the counts
and classes it needs from the engine's tables (their trial-level errors:
:mod:`replicate.trials.trial_error`):

- means (accuracy, Δ, ΔR): paired on the items, a t test with
  Welch-Satterthwaite degrees of freedom;
- the shares of a cell's classes (P+, P-, Pchg, class counts and shares):
  each shared item's class on the two sides crossed into a 2 x 2 table,
  Newcombe's paired interval, and the swap null's p
  (:mod:`replicate.stats.swapnull`);
- shares with no per-item indicator (the null's percentiles, screening
  shares): Newcombe's interval for two independent shares, both over the
  shared items (conservative);
- item counts: exact, and only when the claim's items are all shared.

Pure: tables in, results out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from replicate.printed import Printed, misprint
from replicate.stats.figure_comparison import THRESHOLD_TEST, Error, mean_comparison, shifted, threshold_comparison
from replicate.stats.replication import (
    DOES_NOT_REPLICATE,
    REPLICATES,
    UNDERPOWERED,
    Comparison,
    holm,
    not_rejected,
    paired_share_verdict,
    share_difference,
    verdict,
)
from replicate.trials.fresh import paired_class_share
from replicate.trials.results import CLASS_FIGURES
from replicate.trials.trial_error import TrialErrors
from replicate.verify.claim import Claim
from replicate.verify.matching import Computed, PrintedFlag
from replicate.verify.trials_recompute import TrialsRecomputer

DESIGN_TEST = "exact: an item count is fixed by the design, not sampled"
SHARED = "@shared"  # suffix of the released table restricted to the items the fresh one holds

#: Replicates of the swap null of a paired class share (seeded by the claim's seed).
SWAP_RESAMPLES = 2000

@dataclass(frozen=True)
class ComparedOn:
    """The items a replicated figure is compared on: ``items`` of the release's ``of`` (the claim's own n).

    ``misprint`` is printed - release (as a fraction 0-1; a count over the
    release's items) when the printed figure does not match the whole
    release at printed precision, else 0: the comparison's target is then
    the release's figure on the shared items moved by it, so a misprinted
    claim cannot replicate by the release's data alone.
    """

    items: int | None
    of: int | None
    released_on_shared: Computed  # the release's figure on those items
    misprint: float = 0.0

    @property
    def subset(self) -> bool:
        return self.items is not None and self.of is not None and self.items < self.of

    def to_json(self) -> dict:
        return {"items": self.items, "of": self.of, "released_on_shared": self.released_on_shared.to_json(),
                "printed_minus_release": self.misprint}


@dataclass(frozen=True)
class Replicated:
    """A claim checked against a fresh collection."""

    computed: Computed  # the figure on the fresh table
    verdict: str | None  # replicates | does not replicate | underpowered; None when not computable
    test: str
    tolerance: float
    comparison: Comparison | None = None
    why: str | None = None
    fresh_outcome: str | None = None  # for a flag: pass | fail | undecided
    compared_on: ComparedOn | None = None
    #: Holm's adjusted p over the claims with a test replicated against the same collection (``family`` of them)
    p_adjusted: float | None = None
    family: int = 0

    def to_json(self) -> dict:
        c = self.comparison
        of = "fresh share - threshold" if self.test == THRESHOLD_TEST else "fresh - release, on the shared items"
        return {
            "interval": None if c is None else {"low": c.low, "high": c.high, "level": 0.95, "of": of},
            "difference": None if c is None else c.difference,
            "test": self.test,
            "p_value": None if c is None else c.p_value,
            "p_holm": self.p_adjusted,
            "holm_family": self.family or None,
            "statistic": None if c is None else c.statistic,
            "tolerance": self.tolerance,
            "compared_on": None if self.compared_on is None else self.compared_on.to_json(),
        }


#: Why a claim whose interval excludes 0 is not "does not replicate" (:func:`family_corrected`).
NOT_AFTER_HOLM = ("the interval excludes 0, but the test does not reject after Holm's correction over the claims "
                  "tested against the same fresh collection (its adjusted p, column \"Holm p\", is 0.05 or more)")


def family_corrected(reps: Sequence[Replicated], *, alpha: float = 0.05) -> list[Replicated]:
    """The claims replicated against one fresh collection, each test's p adjusted by Holm over those with a test.

    A paper is judged on all of its claims at once: at 5% each, one of 20 correct claims would read "does
    not replicate" by chance. So **does not replicate** needs the test's Holm-adjusted p below ``alpha``
    (the chance of any such verdict on a correct claim among them stays at most ``alpha``). A verdict
    that does not keep it becomes **replicates** if its interval lies inside the tolerance, else
    **underpowered**, with the reason. Claims without a p-value (shares with no per-item reading, flags,
    item counts, a comparison carrying a misprint) are not in the family and keep their verdicts.
    """
    tested = [k for k, r in enumerate(reps)
              if r.verdict is not None and r.comparison is not None and r.comparison.p_value is not None]
    adjusted = holm([float(reps[k].comparison.p_value) for k in tested])  # type: ignore[union-attr, arg-type]
    out = list(reps)
    for k, a in zip(tested, adjusted):
        r = out[k] = replace(reps[k], p_adjusted=a, family=len(tested))
        if r.verdict == DOES_NOT_REPLICATE and not a < alpha:
            assert r.comparison is not None
            out[k] = replace(r, verdict=not_rejected(r.comparison.low, r.comparison.high, r.tolerance), why=NOT_AFTER_HOLM)
    return out


def _misprint(c: Claim, full: Computed) -> float:
    """printed - release as a fraction (:func:`replicate.printed.misprint`; 0 for a pass/fail or no figure)."""
    p = c.printed
    if not isinstance(p, Printed) or full.value is None or isinstance(full.value, bool):
        return 0.0
    return float(misprint(p, full.value, full.n))


def _share_of(v: Computed, unit: str) -> float:
    """A share figure as a fraction 0-1 of its items (a count over its ``n``)."""
    assert v.value is not None and v.n
    return float(Fraction(v.value) / v.n) if unit == "count" else float(v.value)


class ReplicationChecker:
    """Compares claims over one table between the release on the shared items and the fresh table.

    ``released`` is the whole release (for the counts of :class:`ComparedOn`),
    ``shared`` the release restricted to the items the fresh table holds (the
    same name as ``released`` when it holds all of them), ``fresh`` the fresh
    table restricted to the release's items.
    """

    def __init__(self, rc: TrialsRecomputer, released: str, fresh: str, shared: str | None = None) -> None:
        self.rc = rc
        self.released = released
        self.shared = shared or released
        self.fresh = fresh
        self._errors: dict[str, TrialErrors] = {}

    def check(self, c: Claim) -> Replicated:
        fresh = self.rc.compute(c, self.fresh)
        full = self.rc.compute(c, self.released)
        shared = full if self.shared == self.released else self.rc.compute(c, self.shared)
        on = ComparedOn(shared.n, full.n, shared, _misprint(c, full))
        rep = self._check(c, fresh, shared, on, float(c.settings.fraction("tolerance")))
        return replace(rep, compared_on=on)

    def _check(self, c: Claim, fresh: Computed, shared: Computed, on: ComparedOn, tol: float) -> Replicated:
        family = c.spec.family
        if family == "design":
            if on.subset:
                return Replicated(fresh, UNDERPOWERED, DESIGN_TEST, tol, why=f"the fresh items are a subset: "
                                  f"{on.items} of {on.of} (an item count is not a replication question there)")
            return self._design(c, fresh, tol)
        if fresh.value is None:
            return Replicated(fresh, None, "-", tol, why=fresh.why)
        if family == "flag":
            return self._flag(c, fresh, tol)
        if shared.value is None:
            return Replicated(fresh, None, "-", tol, why=f"the release on the shared items: {shared.why}")
        if family == "share":
            share = self._paired_share(c) if self._paired(c) else self._unpaired_share(c, fresh, shared)
            if share is None:
                return Replicated(fresh, None, "-", tol, why="no items on a side")
            cmp = shifted(share, on.misprint)
            v = paired_share_verdict(cmp, tol) if not on.misprint else verdict(cmp.low, cmp.high, tol)
            return Replicated(fresh, v, cmp.test, tol, cmp)
        target = float(shared.value) + on.misprint
        cmp = mean_comparison(float(fresh.value), target, self._error(c, self.fresh), self._error(c, self.shared))
        return Replicated(fresh, verdict(cmp.low, cmp.high, tol), cmp.test, tol, cmp)

    @staticmethod
    def _paired(c: Claim) -> bool:
        return c.spec.scope == "cell" and c.metric[len("items."):] in CLASS_FIGURES

    def _paired_share(self, c: Claim) -> Comparison | None:
        """The claim's class share on the release's shared items and the fresh ones, paired by item
        (:func:`replicate.trials.fresh.paired_class_share`)."""
        s = c.settings
        return paired_class_share(self.rc.cell(c, self.shared), self.rc.cell(c, self.fresh),
                                  CLASS_FIGURES[c.metric[len("items."):]], eps=s.fraction("eps"), alpha=float(s.alpha),
                                  n_resamples=SWAP_RESAMPLES, seed=int(s.seed))

    @staticmethod
    def _unpaired_share(c: Claim, fresh: Computed, shared: Computed) -> Comparison | None:
        """Newcombe's interval for two independent shares, both over the shared items (no per-item indicator)."""
        if not shared.n or not fresh.n:
            return None
        unit = c.printed.unit
        k = _share_of(fresh, unit) * fresh.n
        return share_difference(k, fresh.n, _share_of(shared, unit), shared.n)

    def _design(self, c: Claim, fresh: Computed, tol: float) -> Replicated:
        p = c.printed
        assert isinstance(p, Printed)
        same = fresh.value is not None and Fraction(fresh.value) == Fraction(p.value)
        return Replicated(fresh, REPLICATES if same else DOES_NOT_REPLICATE, DESIGN_TEST, tol)

    def _flag(self, c: Claim, fresh: Computed, tol: float) -> Replicated:
        row = self.rc.screen_row(c, self.fresh)
        assert row is not None and isinstance(c.printed, PrintedFlag)
        outcome, cmp = threshold_comparison(row.informative, row.n_items, float(c.settings.fraction("threshold")))
        if outcome == "undecided":
            v = UNDERPOWERED
        else:
            v = REPLICATES if (outcome == "pass") == c.printed.value else DOES_NOT_REPLICATE
        return Replicated(fresh, v, THRESHOLD_TEST, tol, cmp, fresh_outcome=outcome)

    def _error(self, c: Claim, name: str) -> Error:
        """The trial-level error of the claim's mean figure on table ``name`` (:mod:`replicate.trials.trial_error`)."""
        if name not in self._errors:
            self._errors[name] = TrialErrors(self.rc.tables[name])
        errors = self._errors[name]
        if c.spec.scope == "model":
            return errors.accuracy(str(c.model), str(c.benchmark), loose=c.metric == "accuracy.loose")
        cell = self.rc.cell(c, name)
        return errors.delta(cell) if c.metric == "items.delta" else errors.delta_r(cell)
