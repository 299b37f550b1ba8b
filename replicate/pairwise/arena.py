"""Chatbot Arena battles counted by model: win, tie, loss, win rate with ties as half (pure).

A battle is one human vote between two models' answers to one conversation
(``arena-battles@1``): ``model_a``, ``model_b`` and the winner, one of
``model_a``, ``model_b``, ``tie`` and ``tie (bothbad)``. Each battle is one
unit for each of its two models: 1 for the winner, 0 for the loser, 0.5 for
both in a tie, ``tie (bothbad)`` included: FastChat's Arena analysis
(``elo_analysis.py``) counts both ties so in its online Elo (``compute_elo``:
0.5) and its Bradley-Terry fit (``compute_mle_elo``: half a win each way).
Its pairwise win-fraction table (``compute_pairwise_win_fraction``) counts
wins over all battles of a pair, a tie of either kind no win: that share is
the ``win`` column here (over all of a model's battles, not per opponent).
Every battle counts, ``anony`` or not (the leaderboard keeps anonymous
battles only). A model's win rate is the mean of its units, (wins +
ties / 2) / battles. The intervals resample whole questions (every battle
on one ``question_id``) when the battles name their question, else battles
one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from replicate.judge.model import KEY_SEP, LabelledRun
from replicate.judge.uncertainty import Uncertainty
from replicate.labels import label_name
from replicate.pairwise.rules import LOSS, TIE, WIN, Record, Unit
from replicate.pairwise.tally import PairwiseError, PairwiseTally, count

#: How ``arena-battles@1`` keys a battle.
ARENA_KEY = ("question_id", "model_a", "model_b", "turn", "judge", "vote")
#: Arena's outcomes; both ties count as a tie.
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")


@dataclass(frozen=True, slots=True)
class Battle:
    """One vote: ``winner`` (one of :data:`WINNERS`) between ``model_a`` and ``model_b``; ``question`` and
    ``turn`` empty when the file does not give them; ``where`` the file and line it came from."""

    question: str
    model_a: str
    model_b: str
    turn: str
    winner: str
    where: str = ""

    @property
    def value(self) -> float:
        """model_a's outcome: 1 won, 0 lost, 0.5 a tie (either kind)."""
        return {"model_a": WIN, "model_b": LOSS}.get(self.winner, TIE)


def battles_of(runs: Sequence[LabelledRun]) -> list[Battle]:
    """Every battle of runs read by ``arena-battles@1``, a PairwiseError when they are not battles."""
    out = []
    for run in runs:
        if run.key_names != ARENA_KEY:
            raise PairwiseError(f"run {run.name} is not Arena battles (read them with arena-battles@1)")
        for i, (key, code) in enumerate(zip(run.keys.tolist(), run.labels.tolist())):
            q, a, b, turn, _judge, _vote = key.split(KEY_SEP)
            winner = label_name(code, run.label_set) if code >= 0 else None
            if winner not in WINNERS:
                raise PairwiseError(f"{run.where(i) or run.name}: winner {winner!r} is none of {', '.join(WINNERS)}")
            out.append(Battle(q, a, b, turn, str(winner), run.where(i) or ""))
    return out


def battle_record(battle: Battle, index: int) -> Record:
    """One battle as a resolved record: one unit for each model (``index`` names a battle without a question)."""
    q = battle.question or str(index + 1)
    v = battle.value
    units = (Unit(q, battle.model_a, battle.model_b, v), Unit(q, battle.model_b, battle.model_a, 1.0 - v))
    return Record(q, (battle.model_a, battle.model_b), units, False, False)


def arena_tally(battles: Sequence[Battle], *, reader: str = "-", uncertainty: Uncertainty | None = None) -> PairwiseTally:
    """Every model's battles counted (win, tie, loss, win rate with ties as half), clustered by question_id when
    every battle names one, else by battle (a battle's two units resampled together)."""
    if not battles:
        raise PairwiseError("no battles to count")
    records = [battle_record(b, i) for i, b in enumerate(battles)]
    named = all(b.question for b in battles)
    return count(records, rule="arena", parser="arena-winner", reader=reader, left_out=set(),
                 uncertainty=uncertainty, cluster_name=None if named else "battle")
