"""MT-Bench's score as FastChat's ``show_result.py`` defines it: the mean single-answer rating per model (pure).

FastChat's ``gen_judgment.py`` records each single-answer judgment's rating
(``run_judge_single``: the first ``[[N]]``, else the first ``[N]``, read with
``ast.literal_eval``; -1 when there is none). ``show_result.py --mode single``
then drops every row whose score is -1 and prints, per model, the mean score
of turn 1, of turn 2, and of all its rows together ("Average": the mean over
the rows, not the mean of the two turn means). Here each judgment's text is
read by a parser's :meth:`~replicate.parsing.Parser.score` (``mtbench-single@2``
is FastChat's reading), a judgment without a rating is FastChat's -1 (left
out, counted), and the three means follow the same rule.

Intervals: percentile bootstrap of each mean (:func:`replicate.stats.means.bootstrap_means`),
whole questions resampled by default (a question's two turns are not
independent), items one by one with ``cluster`` ``item``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from replicate.judge.uncertainty import Uncertainty
from replicate.parsing import Parser
from replicate.stats.bootstrap import Interval
from replicate.stats.means import bootstrap_means

#: The key a run must have to be read as MT-Bench single-answer judgments (``fastchat-single@1``'s).
KEY_NAMES = ("question_id", "model", "turn")
#: FastChat's own reading of a single-answer judgment (any other parser is a departure, said in every output).
FASTCHAT_READING = "mtbench-single@2"
#: The figures per model: (name, the turns it covers; None: every turn, show_result's "Average").
FIGURES: tuple[tuple[str, tuple[str, ...] | None], ...] = (("overall", None), ("turn_1", ("1",)), ("turn_2", ("2",)))


@dataclass(frozen=True)
class Mean:
    """One mean rating: its value (None over no rated judgment), the judgments averaged, its interval."""

    value: float | None
    n: int
    interval: Interval | None = None

    def to_json(self) -> dict:
        return {"mean": self.value, "n": self.n, "interval": None if self.interval is None else self.interval.to_json()}


@dataclass(frozen=True)
class ModelScore:
    """A model's MT-Bench score: its judgments, those without a rating (FastChat's -1), three means."""

    model: str
    judgments: int
    unrated: int
    means: dict[str, Mean]  # FIGURES' names -> Mean

    def to_json(self) -> dict:
        return {"model": self.model, "judgments": self.judgments, "unrated": self.unrated,
                **{name: m.to_json() for name, m in self.means.items()}}


@dataclass(frozen=True)
class MTBenchScores:
    """Every model's score, highest overall mean first (as show_result sorts), with how it was read."""

    models: tuple[ModelScore, ...]
    parser: str
    reader: str
    uncertainty: Uncertainty | None
    #: turns other than 1 and 2 found (in no turn mean, in the overall one, as show_result does)
    other_turns: tuple[str, ...] = ()

    @property
    def departure(self) -> str | None:
        """How this reading departs from FastChat's, or None when it is FastChat's."""
        if self.parser == FASTCHAT_READING:
            return None
        return (f"read with {self.parser}, not FastChat's own reading ({FASTCHAT_READING}): the means are not "
                "FastChat's where the two readings differ")

    def to_json(self) -> dict:
        return {
            "figure": "MT-Bench score: mean rating per model, FastChat show_result's rule (score -1 left out)",
            "parser": self.parser,
            "departure": self.departure,
            "reader": self.reader,
            "models": [m.to_json() for m in self.models],
            "other_turns": list(self.other_turns),
            "uncertainty": None if self.uncertainty is None else self.uncertainty.to_json(),
        }


def split_keys(keys: Sequence[str], sep: str, n_parts: int, names: Sequence[str]) -> list[list[str]]:
    """Each key's parts; a ValueError naming the key names when a key has another number of parts."""
    parts = [k.split(sep) for k in keys]
    bad = next((p for p in parts if len(p) != n_parts), None)
    if bad is not None:
        raise ValueError(f"item key {sep.join(bad)!r} does not have the parts {', '.join(names)}")
    return parts


def mtbench_scores(
    keys: Sequence[str],
    outputs: Sequence[str | None],
    parser: Parser,
    *,
    key_names: Sequence[str],
    sep: str,
    reader: str = "-",
    uncertainty: Uncertainty | None = None,
) -> MTBenchScores:
    """The MT-Bench score of every model in judgments keyed (question_id, model, turn), read by ``parser``.

    ``keys`` are item keys whose parts, joined by ``sep``, are named ``key_names``
    (which must be :data:`KEY_NAMES`); ``outputs`` the judge's texts, None for none
    (no rating). ``uncertainty`` (None: no intervals) sets the bootstrap and its clusters.
    """
    if tuple(key_names) != KEY_NAMES:
        raise ValueError(
            f"MT-Bench scores need judgments keyed {', '.join(KEY_NAMES)} (fastchat-single@1); "
            f"these are keyed {', '.join(key_names)}")
    if len(keys) != len(outputs):
        raise ValueError(f"keys and outputs must be as many; got {len(keys)} and {len(outputs)}")
    parts = split_keys(keys, sep, 3, KEY_NAMES)
    scores = np.array([np.nan if (s := parser.score(t)) is None else s for t in outputs], dtype=np.float64)
    models = sorted({p[1] for p in parts})
    model_of = np.array([models.index(p[1]) for p in parts], dtype=np.int64) if parts else np.zeros(0, np.int64)
    turns = np.array([p[2] for p in parts], dtype=object)
    rated = ~np.isnan(scores)
    # rows: model x figure; an item counts in a row when rated, of that model, and of the figure's turns
    rows: list[np.ndarray] = []
    for m in range(len(models)):
        mine = rated & (model_of == m)
        for _, turn in FIGURES:
            rows.append(mine if turn is None else mine & np.isin(turns, turn))
    counted = np.array(rows, dtype=bool).reshape(len(rows), len(parts))
    values = np.where(rated, scores, 0.0)
    intervals: list[Interval | None] = [None] * len(rows)
    if uncertainty is not None and uncertainty.resampled and len(rows):
        clusters = uncertainty.clusters(np.asarray(keys, dtype=object))
        intervals = list(bootstrap_means(
            np.broadcast_to(values, counted.shape), counted, clusters=clusters, n_resamples=uncertainty.replicates,
            confidence_level=uncertainty.confidence_level, seed=uncertainty.seed))
    out = []
    for m, model in enumerate(models):
        means = {}
        for f, (name, _) in enumerate(FIGURES):
            row = counted[m * len(FIGURES) + f]
            n = int(row.sum())
            means[name] = Mean(float(values[row].mean()) if n else None, n, intervals[m * len(FIGURES) + f])
        mine = model_of == m
        out.append(ModelScore(model, int(mine.sum()), int((mine & ~rated).sum()), means))
    out.sort(key=lambda s: (-(s.means["overall"].value if s.means["overall"].value is not None else -np.inf), s.model))
    other = tuple(sorted(set(turns.tolist()) - {"1", "2"}))
    return MTBenchScores(tuple(out), parser.name, reader, uncertainty if uncertainty is not None and uncertainty.resampled else None, other)
