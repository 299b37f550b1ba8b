"""A pairwise judge's verdicts against human votes on the same pairs, as MT-Bench's paper measures it (pure).

The judge's verdict on a question and a pair of models (its two games
already resolved by the harness's rule, :mod:`replicate.pairwise.tally`; one
AlpacaEval annotation; one battle of another judge) is aligned with every
human battle on the same question and the same two models, whatever order
either names them in: both are put in one orientation, the two models in
sorted order (as FastChat's ``compute_agreement.py`` does), a verdict given
the other way round flipped. When the judge's verdicts carry a turn (MT-Bench
pairs) a battle's turn must match too.

Each (judge verdict, human vote) pair counts once, as in
``compute_agreement.py``: a question voted on by three experts gives three
pairs. With ties: the share of pairs on which the two give the same outcome
(first model wins, tie, second wins; ``tie (bothbad)`` is a tie);
without ties: the same share over the pairs where neither says tie (the
paper's setups S1 and S2). Cohen's kappa over the same pairs, three
categories with ties and two without (:func:`replicate.stats.agreement.agreement`).
Battles with no judge verdict on their pair, battles whose judge verdict the
harness dropped (no verdict in a game) and judge verdicts with no battle are
counted, not paired. Intervals: a bootstrap over questions (every pair of a
question resampled together), the agreement rate's never narrower than its
Wilson interval (:mod:`replicate.stats.shares`), kappa's from the resampled
tables (:mod:`replicate.stats.agreement_boot`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from replicate.judge.uncertainty import ITEM, Uncertainty
from replicate.pairwise.arena import Battle
from replicate.pairwise.rules import TIE, Record
from replicate.pairwise.tally import PairwiseError
from replicate.stats.agreement import Figure, agreement
from replicate.stats.agreement_boot import agreement_intervals
from replicate.stats.bootstrap import Clusters, Interval
from replicate.stats.shares import bootstrap_shares

#: The outcomes of the first model, in order: its loss, a tie, its win.
OUTCOMES = (0.0, TIE, 1.0)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's outcome for ``models[0]`` against ``models[1]`` on ``question`` (1, 0.5, 0; None: none)."""

    question: str
    models: tuple[str, str]
    turn: str | None
    value: float | None


def verdicts_of(records: Sequence[Record], turns: Sequence[str | None] | None = None) -> list[Verdict]:
    """Each resolved record's verdict for its first model: its units' mean above 0.5 a win, 0.5 a tie, below a
    loss (FastChat's one unit; Arena-Hard's battles of both games; AlpacaEval's preference); None when the
    harness dropped it. ``turns``: each record's turn (MT-Bench pairs), else none."""
    out = []
    for i, r in enumerate(records):
        mine = [u.value for u in r.units if u.model == r.models[0]]
        value = None
        if mine:
            mean = sum(mine) / len(mine)
            value = 1.0 if mean > TIE else 0.0 if mean < TIE else TIE
        out.append(Verdict(r.question, r.models, None if turns is None else turns[i], value))
    return out


def annotation_battles(records: Sequence[Record]) -> tuple[list[Battle], int]:
    """A second annotator's AlpacaEval annotations (keyed by instruction, generator_2 against generator_1) as
    battles on the instruction: generator_2 is model_a, winning above 1.5, losing below, a tie at 1.5; and how
    many annotations give no preference (no battle; counted)."""
    battles = []
    for v in verdicts_of(records):
        if v.value is not None:
            winner = "model_a" if v.value == 1.0 else "model_b" if v.value == 0.0 else "tie"
            battles.append(Battle(v.question, v.models[0], v.models[1], "", winner))
    return battles, len(records) - len(battles)


def battle_verdicts(battles: Sequence[Battle]) -> list[Verdict]:
    """Another judge's battles (a file in the battle layout, e.g. MT-Bench's ``gpt4_pair`` votes) as verdicts."""
    return [Verdict(b.question, (b.model_a, b.model_b), b.turn or None, b.value) for b in battles]


@dataclass(frozen=True)
class Agreement:
    """Agreement over some (judge, human) pairs: the share that agree and Cohen's kappa."""

    n: int
    agree: int
    kappa: float | None
    rate_interval: Interval | None = None
    kappa_interval: Interval | None = None

    @property
    def rate(self) -> float | None:
        return self.agree / self.n if self.n else None

    def to_json(self) -> dict:
        return {"pairs": self.n, "agree": self.agree, "rate": self.rate, "cohen_kappa": self.kappa,
                "rate_interval": None if self.rate_interval is None else self.rate_interval.to_json(),
                "cohen_kappa_interval": None if self.kappa_interval is None else self.kappa_interval.to_json()}


@dataclass(frozen=True)
class HumanAgreement:
    """A judge against human battles: agreement with and without ties, overall and per turn, and what was
    left unpaired."""

    with_ties: Agreement
    without_ties: Agreement
    by_turn: tuple[tuple[str, Agreement, Agreement], ...]  # (turn, with ties, without ties), when turns match
    battles: int  # human battles given
    paired_battles: int  # battles paired with a judge verdict
    judged_pairs: int  # judge verdicts paired with at least one battle
    no_battle: int  # judge verdicts (with or without a verdict) with no battle on their pair
    no_judgment: int  # battles with no judge verdict on their pair
    judge_dropped: int  # battles whose pair the judge has, but without a verdict (the harness dropped it)
    flipped: int  # battles paired with a verdict that names the two models the other way round
    by_turns: bool  # whether turns were matched
    judge: str  # how the judge's verdicts were read
    human: str  # the battles' reader
    human_without_verdict: int = 0  # a second annotator's annotations without a preference (no battle)
    unit: str = "question_id"  # what a battle's question names (an AlpacaEval instruction: "instruction")

    def to_json(self) -> dict:
        return {
            "judge": self.judge, "human": self.human, "orientation": "models in sorted order",
            "with_ties": self.with_ties.to_json(), "without_ties": self.without_ties.to_json(),
            "by_turn": [{"turn": t, "with_ties": w.to_json(), "without_ties": wo.to_json()} for t, w, wo in self.by_turn],
            "turns_matched": self.by_turns, "battles": self.battles, "paired_battles": self.paired_battles,
            "judged_pairs_paired": self.judged_pairs, "judge_verdicts_without_battle": self.no_battle,
            "battles_without_judgment": self.no_judgment, "battles_judge_dropped": self.judge_dropped,
            "flipped": self.flipped, "human_without_verdict": self.human_without_verdict, "question": self.unit,
        }


def _oriented(models: tuple[str, str], value: float) -> tuple[tuple[str, str], float]:
    """The pair in sorted order and the first one's outcome (the value flipped when the order was reversed)."""
    a, b = models
    return ((a, b), value) if a < b else ((b, a), 1.0 - value)


def _clusters(questions: np.ndarray, uncertainty: Uncertainty, unit: str) -> Clusters:
    if uncertainty.cluster == ITEM or not all(questions.tolist()):
        return Clusters.items(len(questions))
    if uncertainty.cluster not in (None, unit):
        raise PairwiseError(f"agreement is clustered by {unit} or not at all (item); got {uncertainty.cluster!r}")
    return Clusters.from_values(questions, unit)


def _agreement(judge: np.ndarray, human: np.ndarray, questions: np.ndarray, uncertainty: Uncertainty | None,
               unit: str) -> Agreement:
    n = len(judge)
    agree = judge == human
    kappa = agreement(judge, human, figure="cohen_kappa") if n else None
    if not n or uncertainty is None or not uncertainty.resampled:
        return Agreement(n, int(np.count_nonzero(agree)), kappa)
    clusters = _clusters(questions, uncertainty, unit)
    kw: dict[str, Any] = dict(
        n_resamples=uncertainty.replicates, confidence_level=uncertainty.confidence_level, seed=uncertainty.seed)
    (rate_iv,) = bootstrap_shares(agree[None, :], np.ones((1, n), dtype=bool), clusters=clusters, **kw)
    size = len(OUTCOMES) + 1  # the outcomes and agreement_intervals' missing slot (never used here)
    per_cluster = np.zeros((clusters.count, 1, size, size))
    cells = (clusters.codes, np.zeros(n, dtype=np.int64), np.searchsorted(OUTCOMES, judge),
             np.searchsorted(OUTCOMES, human))
    np.add.at(per_cluster, cells, 1)
    ((kappa_iv,),) = agreement_intervals(per_cluster, [Figure("cohen_kappa")], OUTCOMES, clusters=clusters, **kw)
    return Agreement(n, int(np.count_nonzero(agree)), kappa, rate_iv, kappa_iv)


def _both(judge: np.ndarray, human: np.ndarray, questions: np.ndarray,
          uncertainty: Uncertainty | None, unit: str) -> tuple[Agreement, Agreement]:
    keep = (judge != TIE) & (human != TIE)
    return (_agreement(judge, human, questions, uncertainty, unit),
            _agreement(judge[keep], human[keep], questions[keep], uncertainty, unit))


def human_agreement(
    verdicts: Sequence[Verdict], battles: Sequence[Battle], *, judge: str = "-", human: str = "-",
    uncertainty: Uncertainty | None = None, human_without_verdict: int = 0, unit: str = "question_id",
) -> HumanAgreement:
    """The judge's ``verdicts`` against the human ``battles`` on the same question and pair (and turn, when the
    verdicts carry one); a PairwiseError when the judge gives one pair two verdicts. ``uncertainty``: bootstrap
    intervals of the agreement rates and kappas, whole questions resampled (a question's every pair together;
    pairs one by one when a battle names no question or ``cluster`` is ``item``). ``human_without_verdict``: the
    reference's judgments that gave no battle (a second annotator's null preferences), reported; ``unit``: what
    a question is (``instruction`` for AlpacaEval annotations), the clusters' name."""
    by_turns = any(v.turn is not None for v in verdicts)
    table: dict[tuple[str, tuple[str, str], str | None], tuple[float | None, bool]] = {}
    for v in verdicts:
        pair, value = _oriented(v.models, TIE if v.value is None else v.value)
        key = (v.question, pair, v.turn if by_turns else None)
        if key in table:
            raise PairwiseError(f"the judge gives question {v.question}, {pair[0]} vs {pair[1]}"
                                + (f", turn {v.turn}" if by_turns else "") + " two verdicts; give each pair once")
        table[key] = (None if v.value is None else value, pair != v.models)
    pairs: list[tuple[str, float, float, str]] = []
    seen: set[tuple] = set()
    no_judgment = dropped = flipped = 0
    for b in battles:
        pair, value = _oriented((b.model_a, b.model_b), b.value)
        key = (b.question, pair, b.turn if by_turns else None)
        if key not in table:
            no_judgment += 1
            continue
        seen.add(key)
        verdict, judge_flipped = table[key]
        if verdict is None:
            dropped += 1
            continue
        flipped += judge_flipped != (pair != (b.model_a, b.model_b))
        pairs.append((b.turn, verdict, value, b.question))
    j = np.array([p[1] for p in pairs], dtype=np.float64)
    h = np.array([p[2] for p in pairs], dtype=np.float64)
    q = np.array([p[3] for p in pairs], dtype=object)
    with_ties, without_ties = _both(j, h, q, uncertainty, unit)
    by_turn = []
    if by_turns:
        turns = np.array([p[0] for p in pairs], dtype=object)
        for t in sorted({p[0] for p in pairs}, key=lambda s: (len(s), s)):
            by_turn.append((t, *_both(j[turns == t], h[turns == t], q[turns == t], uncertainty, unit)))
    return HumanAgreement(
        with_ties, without_ties, tuple(by_turn), len(battles), len(pairs),
        sum(1 for k in seen if table[k][0] is not None),
        sum(1 for k in table if k not in seen), no_judgment, dropped, flipped, by_turns, judge, human,
        human_without_verdict, unit,
    )
