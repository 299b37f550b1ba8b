"""Pairwise judgments counted by model: win, tie, loss, win rate with ties as half, position bias (pure).

The games of labelled runs (their items keyed as their reader keys them) are
put together per question by :func:`games_of`, resolved by the harness's rule
(:mod:`replicate.pairwise.rules`) and counted per model by :func:`tally`.
Which layout a run has follows from its key's names:

- ``question_id, model_a, model_b, turn`` (``fastchat-pair@1``): the two
  games of a record are the keys (q, m1, m2, t) and (q, m2, m1, t), each
  verdict (``A``, ``B``, ``tie``) on the order of its key;
- ``question_id, model, game`` (``arena-hard-judgment@1``, ``arena-hard-score@1``):
  the games are ``1`` (the baseline shown as A) and ``2``, each verdict one of
  ``B>>A`` .. ``A>>B``; the rule follows the file's layout (v0.1 or v2.0).

Intervals: each share and the win rate get a percentile bootstrap over
questions (whole questions resampled, with every record and battle of a
question; ``item`` resamples counted units one by one, which assumes them
independent); shares are never narrower than their Wilson interval
(:mod:`replicate.stats.shares`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import ITEM, Uncertainty
from replicate.labels import label_name
from replicate.pairwise.layout import ARENA_HARD_KEY, FASTCHAT_KEY
from replicate.pairwise.rules import ARENA_HARD_VERDICTS, STRONG_WEIGHT, Record, Rule, resolve
from replicate.stats.bootstrap import Clusters, Interval
from replicate.stats.means import bootstrap_means
from replicate.stats.shares import bootstrap_shares

if TYPE_CHECKING:
    from replicate.pairwise.lc import LengthControl

#: The name of Arena-Hard's opponent when the files do not name it.
BASELINE = "baseline"
FIGURES = ("win", "tie", "loss")
#: The harness's own readings of each rule's judgments (any other parser is a departure, said in every output):
#: FastChat's two output formats ([[A]] and [[rating_a,rating_b]]) or the winners it recorded
#: (fastchat-pair-winners@1); Arena-Hard's reading of its layout, or the verdicts it recorded (arena-hard-score@1).
HARNESS_READINGS: dict[str, tuple[str, ...]] = {
    "fastchat": ("mtbench-pair@1", "mtbench-pair-scores@1", "fastchat-winners"),
    "arena-hard-v0.1": ("arena-hard@1", "arena-hard-score"),
    "arena-hard-v2.0": ("arena-hard-last@1", "arena-hard-score"),
    "alpacaeval": ("alpacaeval-preference@1",),
    "arena": ("arena-winner",),
}


class PairwiseError(ValueError):
    """Runs that cannot be read as both-order pairwise judgments (the message says why)."""


@dataclass(frozen=True)
class Games:
    """Both games of every record of some runs, and the rule that resolves them."""

    rule: Rule
    games: tuple[tuple[str, str, str, str | None, str | None], ...]  # (question, first, second, g1, g2)
    unpaired: int  # games whose other game is missing (not resolved; reported)
    turns: tuple[str | None, ...] = ()  # each record's turn (FastChat pairs), else empty


def _verdicts(run: LabelledRun, allowed: Sequence[str]) -> list[str | None]:
    names = [None if c < 0 else label_name(c, run.label_set) for c in run.labels.tolist()]
    bad = next((n for n in names if n is not None and n not in allowed), None)
    if bad is not None:
        raise PairwiseError(
            f"run {run.name}: label {bad!r} is not a pairwise verdict ({', '.join(allowed)}); "
            f"read it with {'mtbench-pair@1' if 'tie' in allowed else 'arena-hard@1'}")
    return [None if n is None else str(n) for n in names]


def _layout_rule(runs: Sequence[LabelledRun]) -> Rule:
    layouts = {dict(f.reader_options).get("layout", "v0.1") for r in runs for f in r.files} or {"v0.1"}
    if len(layouts) > 1:
        raise PairwiseError(f"the files mix Arena-Hard layouts ({', '.join(sorted(layouts))}), whose rules differ; "
                            "give one layout's files at a time")
    return "arena-hard-v2.0" if layouts.pop() == "v2.0" else "arena-hard-v0.1"


def games_of(runs: Sequence[LabelledRun]) -> Games:
    """Every record's two games in ``runs`` (one layout), a PairwiseError when they are not pairwise judgments."""
    key_names = {r.key_names for r in runs}
    if len(key_names) != 1:
        raise PairwiseError("the runs are keyed differently; give files of one reader")
    names = key_names.pop()
    seen: dict[str, str | None] = {}
    first: dict[str, tuple[LabelledRun, int]] = {}  # key -> the run and item it was read first from
    order: list[str] = []
    for run in runs:
        allowed = ("A", "B", "tie") if names == FASTCHAT_KEY else ARENA_HARD_VERDICTS
        if names not in (FASTCHAT_KEY, ARENA_HARD_KEY):
            raise PairwiseError(
                f"run {run.name} is keyed {', '.join(names or ('?',))}: pairwise judgments are read with "
                "fastchat-pair@1 (question_id, model_a, model_b, turn) or an Arena-Hard reader (question_id, model, game)")
        for i, (key, verdict) in enumerate(zip(run.keys.tolist(), _verdicts(run, allowed))):
            if key in seen:
                was, j = first[key]
                raise PairwiseError(f"the game {key.replace(KEY_SEP, ' / ')} is in more than one run "
                                    f"({was.where(j) or was.name} and {run.where(i) or run.name}); "
                                    "give each judgment once")
            seen[key] = verdict
            first[key] = (run, i)
            order.append(key)
    games = []
    turns: list[str | None] = []
    used: set[str] = set()
    unpaired = 0
    for key in order:
        if key in used:
            continue
        parts = key.split(KEY_SEP)
        if names == FASTCHAT_KEY:
            q, a, b, t = parts
            other = KEY_SEP.join((q, b, a, t))
        else:
            q, model, game = parts
            if game not in ("1", "2"):
                raise PairwiseError(f"game {game!r} of {q} / {model} is neither 1 nor 2")
            other = KEY_SEP.join((q, model, "2" if game == "1" else "1"))
        if other not in seen or other == key:
            unpaired += 1
            used.add(key)
            continue
        used.update((key, other))
        if names == FASTCHAT_KEY:  # the first seen is game 1 (the reader gives game 1 first); the rule is symmetric
            games.append((q, a, b, seen[key], seen[other]))
            turns.append(t)
        else:
            g1, g2 = (seen[key], seen[other]) if game == "1" else (seen[other], seen[key])
            games.append((q, model, BASELINE, g1, g2))
    rule: Rule = "fastchat" if names == FASTCHAT_KEY else _layout_rule(runs)
    return Games(rule, tuple(games), unpaired, tuple(turns))


@dataclass(frozen=True)
class Share:
    """A count over a denominator, with its interval."""

    count: float
    n: float
    interval: Interval | None = None

    @property
    def value(self) -> float | None:
        return self.count / self.n if self.n else None

    def to_json(self) -> dict:
        return {"count": self.count, "n": self.n, "share": self.value,
                "interval": None if self.interval is None else self.interval.to_json()}


@dataclass(frozen=True)
class ModelTally:
    """One model's outcomes over the units the rule gives it."""

    model: str
    opponents: tuple[str, ...]
    records: int  # records (questions, per pair and turn) the model is in
    dropped: int  # of which the harness drops (no verdict)
    shares: dict[str, Share]  # win, tie, loss: units over all units
    win_rate: Share  # (win + tie / 2) / units: FastChat's win_rate_adjusted, Arena-Hard's score
    position: Share  # records whose two games disagree, over records with both games read
    inconsistent: int  # FastChat: ties made by disagreeing games (within tie)

    @property
    def discrete_win_rate(self) -> float | None:
        """(win + tie / 2) / units: the win rate of the outcomes alone (AlpacaEval's ``discrete_win_rate``; for
        FastChat and Arena-Hard, whose units are 1, 0.5 or 0, the win rate itself)."""
        n = self.win_rate.n
        return (self.shares["win"].count + self.shares["tie"].count / 2) / n if n else None

    def to_json(self) -> dict:
        return {
            "model": self.model, "opponents": list(self.opponents), "records": self.records, "dropped": self.dropped,
            **{name: s.to_json() for name, s in self.shares.items()},
            "win_rate_ties_half": self.win_rate.to_json(), "discrete_win_rate": self.discrete_win_rate,
            "position_disagreement": self.position.to_json(),
            "inconsistent_ties": self.inconsistent,
        }


@dataclass(frozen=True)
class PairwiseTally:
    """Every model's tally, highest win rate first, with the rule and how units were counted."""

    rule: Rule
    unit: str  # "record" (FastChat), "battle" (Arena-Hard) or "annotation" (AlpacaEval)
    models: tuple[ModelTally, ...]
    parser: str
    reader: str
    baseline: str | None
    unpaired: int
    weight: int
    uncertainty: Uncertainty | None
    #: AlpacaEval: its length-controlled win rates, or why they are not computed (None for other rules).
    length_controlled: "LengthControl | None" = None

    @property
    def departure(self) -> str | None:
        """How this reading departs from the harness's own, or None when it is the harness's."""
        own = HARNESS_READINGS[self.rule]
        if self.parser in own:
            return None
        return f"read with {self.parser}, not the harness's own reading ({' or '.join(own)})"

    def to_json(self) -> dict:
        return {
            "rule": self.rule, "unit": self.unit, "parser": self.parser, "reader": self.reader,
            "departure": self.departure,
            "baseline": self.baseline, "strong_weight": self.weight if self.rule != "fastchat" else None,
            "unpaired_games": self.unpaired, "models": [m.to_json() for m in self.models],
            "uncertainty": None if self.uncertainty is None else self.uncertainty.to_json(),
            **({} if self.length_controlled is None else {"length_controlled": self.length_controlled.to_json()}),
        }


#: What one counted unit is, per rule.
UNITS = {"fastchat": "record", "arena-hard-v0.1": "battle", "arena-hard-v2.0": "battle", "alpacaeval": "annotation",
         "arena": "battle"}
#: What clusters the units, per rule (the key part a question or instruction is named by).
CLUSTER_NAMES = {"alpacaeval": "instruction"}


def _clusters(questions: Sequence[str], uncertainty: Uncertainty, name: str) -> Clusters:
    if uncertainty.cluster == ITEM:
        return Clusters.items(len(questions))
    if uncertainty.cluster not in (None, name):
        raise PairwiseError(f"pairwise figures are clustered by {name} or not at all (item); got {uncertainty.cluster!r}")
    return Clusters.from_values(list(questions), name)


def tally(
    games: Games, *, parser: str, reader: str, baseline: str | None = None, weight: int = STRONG_WEIGHT,
    uncertainty: Uncertainty | None = None,
) -> PairwiseTally:
    """Resolve ``games`` by their rule and count each model's units. ``baseline`` (FastChat only): keep the records
    with that model and leave its own row out (``show_result.py --mode pairwise-baseline``)."""
    records: list[Record] = resolve(games.rule, games.games, weight=weight)
    if baseline is not None:
        if games.rule != "fastchat":
            raise PairwiseError("a baseline is chosen for FastChat pairs only (Arena-Hard's games are all against its baseline)")
        records = [r for r in records if baseline in r.models]
    left_out = {baseline} if baseline else ({BASELINE} if games.rule != "fastchat" else set())
    return count(records, rule=games.rule, parser=parser, reader=reader, left_out=left_out, baseline=baseline,
                 unpaired=games.unpaired, weight=weight, uncertainty=uncertainty)


def count(
    records: Sequence[Record], *, rule: Rule, parser: str, reader: str, left_out: set[str], baseline: str | None = None,
    unpaired: int = 0, weight: int = STRONG_WEIGHT, uncertainty: Uncertainty | None = None,
    cluster_name: str | None = None,
) -> PairwiseTally:
    """Count each model's units of resolved ``records`` (models in ``left_out`` get no row): a unit above 0.5 is a
    win, 0.5 a tie, below a loss; the win rate is the units' mean. ``cluster_name``: what a unit's question names
    (default: the rule's, :data:`CLUSTER_NAMES`)."""
    models = sorted({m for r in records for m in r.models} - left_out)
    index = {m: i for i, m in enumerate(models)}
    units = [u for r in records for u in r.units if u.model in index]
    unit_model = np.array([index[u.model] for u in units], dtype=np.int64)
    values = np.array([u.value for u in units], dtype=np.float64)
    mine = unit_model[None, :] == np.arange(len(models))[:, None]
    rec_in = np.array([[m in r.models for r in records] for m in models], dtype=bool).reshape(len(models), len(records))
    both = np.array([r.both_read for r in records], dtype=bool)
    disagree = np.array([r.disagree for r in records], dtype=bool)
    outcome = {"win": values > 0.5, "tie": values == 0.5, "loss": values < 0.5}
    resampled = uncertainty is not None and uncertainty.resampled
    share_iv: dict[str, list[Interval | None]] = {f: [None] * len(models) for f in FIGURES}
    rate_iv: list[Interval | None] = [None] * len(models)
    pos_iv: list[Interval | None] = [None] * len(models)
    if resampled and models:
        assert uncertainty is not None
        kw: dict[str, Any] = dict(
            n_resamples=uncertainty.replicates, confidence_level=uncertainty.confidence_level, seed=uncertainty.seed)
        name = cluster_name or CLUSTER_NAMES.get(rule, "question_id")
        uc = _clusters([u.question for u in units], uncertainty, name)
        for f in FIGURES:
            share_iv[f] = list(bootstrap_shares(np.broadcast_to(outcome[f], mine.shape), mine, clusters=uc, **kw))
        rate_iv = list(bootstrap_means(np.broadcast_to(values, mine.shape), mine, clusters=uc, **kw))
        if both.any():
            rc = _clusters([r.question for r in records], uncertainty, name)
            pos_iv = list(bootstrap_shares(np.broadcast_to(disagree, rec_in.shape), rec_in & both, clusters=rc, **kw))
    out = []
    for i, model in enumerate(models):
        n = float(np.count_nonzero(mine[i]))
        shares = {f: Share(float(np.count_nonzero(outcome[f] & mine[i])), n, share_iv[f][i]) for f in FIGURES}
        mine_records = [r for r, inside in zip(records, rec_in[i]) if inside]
        opponents = tuple(sorted({o for r in mine_records for o in r.models if o != model}))
        out.append(ModelTally(
            model, opponents, len(mine_records), sum(1 for r in mine_records if not r.units),
            shares, Share(float(values[mine[i]].sum()), n, rate_iv[i]),
            Share(float(sum(r.disagree for r in mine_records)), float(sum(r.both_read for r in mine_records)), pos_iv[i]),
            sum(1 for r in mine_records if r.disagree and r.units) if rule == "fastchat" else 0,
        ))
    out.sort(key=lambda t: (-(t.win_rate.value if t.win_rate.value is not None else -1.0), t.model))
    return PairwiseTally(
        rule, UNITS[rule], tuple(out), parser, reader, baseline, unpaired, weight, uncertainty if resampled else None,
    )
