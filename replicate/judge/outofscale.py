"""Labels outside the scale: keep, drop or clip them (pure).

A run's scale is the ordinal range its labels were declared on: the parser's
label set (``umbrela-strict@1``: 0-3) or, for labels a reader decided, the
reader's (``trec-qrels@1``: 0-3). A label outside it (a judge that wrote 10 on
a 0-3 scale) is read as written; what a figure then does with it is the
out-of-scale policy, chosen once per command (``--out-of-scale``):

- ``keep`` (the default): the label stays as read, a category of its own. It
  equals no gold grade (wrong in EM); in MAE, Pearson's r, weighted kappa and
  interval or ratio alpha it counts at its value (10 is 7 above 3); in the
  ordinal figures it is one rank above the scale's top.
- ``drop``: the items whose label lies outside leave that run (counted and
  reported); the other runs keep theirs, and alignment leaves the items out of
  every pair with that run.
- ``clip``: the label is moved to the scale's nearest bound (10 -> 3, as the
  LLMJudge challenge's analysis code does before computing agreement).

Gold is never changed: the policy is about what a judge wrote. Unparsed
outputs (:data:`~replicate.parsing.UNPARSED`) are not labels and are left to the
unparsed policy. Categorical label sets have no outside (a reader refuses a
name that is not one of them), so the policy leaves them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np

from replicate.errors import Message, Param
from replicate.judge.model import LabelledRun, Origins, readonly
from replicate.parsing import UNPARSED

OutOfScale = Literal["keep", "drop", "clip"]
OUT_OF_SCALE: tuple[OutOfScale, ...] = get_args(OutOfScale)
#: The default: labels as read.
KEEP: OutOfScale = "keep"


def check_out_of_scale(policy: str) -> OutOfScale:
    """``policy`` as an :data:`OutOfScale`; ValueError naming the choices otherwise."""
    if policy not in OUT_OF_SCALE:
        raise ValueError(f"out_of_scale must be one of {', '.join(OUT_OF_SCALE)}; got {policy!r}")
    return policy


def scale_of(run: LabelledRun) -> tuple[int, int] | None:
    """The run's scale: its ordinal label set's range; None for categorical or undeclared labels."""
    ls = run.label_set
    return (ls.low, ls.high) if ls is not None and ls.is_ordinal else None


@dataclass(frozen=True, slots=True)
class ScaleOutcome:
    """What the policy did to one run: its scale, and how many labels lay outside (by value)."""

    run: str
    policy: OutOfScale
    scale: tuple[int, int] | None
    outside: tuple[tuple[int, int], ...] = ()  # (label, how many), ascending

    @property
    def count(self) -> int:
        return sum(n for _, n in self.outside)

    def values_text(self) -> str:
        """``10 x1, 12 x2``: the labels outside and how often each."""
        return ", ".join(f"{v} x{n}" for v, n in self.outside)

    def words(self) -> str:
        """One line: the run, how many labels lay outside its scale, and what the policy did with them."""
        if self.scale is None or not self.count:
            return f"{self.run}: no label outside its scale"
        lo, hi = self.scale
        n = self.count
        what = f"{n} label{'s' if n != 1 else ''} outside the scale {lo}-{hi} ({self.values_text()})"
        done = {
            "keep": "kept as a category of its own",
            "drop": f"dropped from the run with {'their items' if n != 1 else 'its item'}",
            "clip": f"clipped to {lo}-{hi}",
        }[self.policy]
        return f"{self.run}: {what}, {done}"

    def to_json(self) -> dict:
        return {
            "run": self.run,
            "scale": None if self.scale is None else {"min": self.scale[0], "max": self.scale[1]},
            "outside": self.count,
            "values": {str(v): n for v, n in self.outside},
            "policy": self.policy,
        }


def dropped_whole(outcomes: Iterable[ScaleOutcome], sizes: Mapping[str, int]) -> Message | None:
    """Why a run was left with no item by ``drop``: every one of its ``sizes[run]`` items had a label outside
    its scale (the first such run); None otherwise."""
    for o in outcomes:
        if o.policy == "drop" and o.scale is not None and o.count and o.count >= sizes.get(o.run, o.count + 1):
            lo, hi = o.scale
            return Message(Param("out_of_scale"), f" drop dropped all {o.count} items of run {o.run!r}: every "
                           f"label lay outside its scale {lo}-{hi} ({o.values_text()}); keep or clip reads them")
    return None


def apply_out_of_scale(run: LabelledRun, policy: str) -> tuple[LabelledRun, ScaleOutcome]:
    """``run`` under ``policy`` (see the module doc), with what was done to it."""
    policy = check_out_of_scale(policy)
    scale = scale_of(run)
    if scale is None:
        return run, ScaleOutcome(run.name, policy, None)
    lo, hi = scale
    labels = run.labels
    off = (labels != UNPARSED) & ((labels < lo) | (labels > hi))
    if not off.any():
        return run, ScaleOutcome(run.name, policy, scale)
    values, counts = np.unique(labels[off], return_counts=True)
    outcome = ScaleOutcome(run.name, policy, scale, tuple(zip(values.tolist(), counts.tolist())))
    if policy == "keep":
        return run, outcome
    if policy == "clip":
        clipped = np.where(off, np.clip(labels, lo, hi), labels).astype(labels.dtype)
        return replace(run, labels=readonly(clipped)), outcome
    return _subset(run, ~off), outcome


def _subset(run: LabelledRun, keep: np.ndarray) -> LabelledRun:
    """``run`` restricted to the items where ``keep`` is set."""
    idx = np.flatnonzero(keep)
    origins = None
    if run.origins is not None:
        origins = Origins(readonly(run.origins.file_index[idx]), readonly(run.origins.line[idx]))
    return replace(run, keys=readonly(run.keys[idx]), gold=readonly(run.gold[idx]), labels=readonly(run.labels[idx]),
                   origins=origins)


def departure_lines(policy: str, outcomes: Iterable[ScaleOutcome]) -> list[str]:
    """The header lines of a result read under a policy other than ``keep`` (none under ``keep``): the
    policy in words, then each run it changed."""
    if policy == KEEP:
        return []
    changed = [o for o in outcomes if o.count]
    how = {"drop": "items whose label lies outside the run's scale are dropped",
           "clip": "labels outside the run's scale are clipped to its bounds"}[policy]
    head = f"out-of-scale labels: {policy} ({how}; --out-of-scale keep reads them as a category of their own)"
    if not changed:
        return [head + "; no label lay outside"]
    return [head + ":", *(f"  {o.words()}" for o in changed)]


def outcomes_json(policy: str, outcomes: Sequence[ScaleOutcome]) -> dict:
    """The JSON of a command's out-of-scale reading: the policy and each run with labels outside."""
    return {"policy": policy, "runs": [o.to_json() for o in outcomes if o.count]}
