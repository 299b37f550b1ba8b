"""Both-order pairwise judgments resolved by model with the harness's own rule (pure).

A pairwise judge sees each question twice, the two answers in one order
(game 1) and then swapped (game 2). A verdict is about positions (``A``: the
answer shown first); which model that is depends on the game. Here the two
games of one question are put together and turned into what the harness
counts for each model, by the harness's rule, before anything is counted:

FastChat (MT-Bench pairs, ``show_result.py --mode pairwise-all`` / ``pairwise-baseline``)
    a record (question, model_1, model_2, turn) holds game 1 (model_1 shown
    as A) and game 2 (model_2 shown as A). A record with an "error" winner in
    either game (no verdict found) is dropped. If game 1's winner is a tie, or
    the two games' winners (mapped to models) differ, the record is a tie for
    both models; otherwise the model both games chose wins and the other
    loses. One record is one unit for each of its two models.

Arena-Hard-Auto (``show_result.py``, v0.1 and v2.0)
    a record (question, model) holds game 1 (the baseline shown as A) and
    game 2 (the model shown as A). Each game's verdict becomes battles of the
    model against the baseline, game 1's inverted: a win is 1, a tie 0.5, a
    loss 0, and a strong verdict (``A>>B``, ``B>>A``) counts ``weight`` (3)
    battles. v0.1 (``get_battles_from_row``) takes each game on its own and
    drops a game without a verdict; v2.0 (``load_judgments``) drops the whole
    record when either game has none. The model's score is the mean of its
    battles (v0.1 fits a Bradley-Terry model to them, whose win rate against
    the baseline is that same mean when every battle is against the baseline;
    v2.0 prints the mean of 100 bootstrap means, whose centre it is).

AlpacaEval (``metrics/helpers.py``; one annotation per instruction, no second game)
    the model's (``generator_2``'s) unit is its preference minus 1 (1 when its
    output is preferred, 0 when the baseline's, 0.5 a draw, a fraction for a
    weighted annotator); ``win_rate`` is their mean, ``discrete_win_rate`` the
    share of units above 0.5 plus half the share at 0.5
    (:func:`alpacaeval_record`).

Position bias, the same for FastChat and Arena-Hard: among records whose two games both have a
verdict, the share whose two games disagree about the model (one says the
model is better, the other says a tie or the baseline; strength aside).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence, get_args

Rule = Literal["fastchat", "arena-hard-v0.1", "arena-hard-v2.0", "alpacaeval", "arena"]
RULES: tuple[str, ...] = get_args(Rule)
#: The rules whose judgments come one per question, not in both orders (no games to resolve, no position figure).
ONE_GAME = ("alpacaeval", "arena")
#: Arena-Hard's weight of a strong verdict (show_result.py's ``--weight``, default 3).
STRONG_WEIGHT = 3

#: An outcome for the model a unit counts for.
WIN, TIE, LOSS = 1.0, 0.5, 0.0


@dataclass(frozen=True, slots=True)
class Unit:
    """One counted outcome: ``value`` (1 win, 0.5 tie, 0 loss) for ``model`` against ``opponent`` on ``question``."""

    question: str
    model: str
    opponent: str
    value: float


@dataclass(frozen=True, slots=True)
class Record:
    """One question judged in both orders, resolved: the units it gives, and what the two games say."""

    question: str
    models: tuple[str, str]  # (model_1, model_2) in FastChat; (model, baseline) in Arena-Hard
    units: tuple[Unit, ...]  # empty when the harness drops the record
    both_read: bool  # both games have a verdict
    disagree: bool  # both read and they disagree about the models


# FastChat ------------------------------------------------------------------------------------
def fastchat_record(question: str, model_1: str, model_2: str, g1: str | None, g2: str | None) -> Record:
    """FastChat's rule on one record; ``g1``/``g2`` are each game's verdict on the order shown
    (``"A"``, ``"B"``, ``"tie"``; None for "error"): game 1 shows model_1 as A, game 2 model_2."""
    w1 = None if g1 is None else {"A": "model_1", "B": "model_2"}.get(g1, g1)
    w2 = None if g2 is None else {"A": "model_2", "B": "model_1"}.get(g2, g2)
    if w1 is None or w2 is None:
        return Record(question, (model_1, model_2), (), False, False)
    disagree = w1 != w2
    if w1 == "tie" or disagree:
        v1 = v2 = TIE
    else:
        v1, v2 = (WIN, LOSS) if w1 == "model_1" else (LOSS, WIN)
    units = (Unit(question, model_1, model_2, v1), Unit(question, model_2, model_1, v2))
    return Record(question, (model_1, model_2), units, True, disagree)


# Arena-Hard ----------------------------------------------------------------------------------
#: A verdict on the order shown -> (the first-shown answer's outcome, battles it counts for).
_SHOWN: dict[str, tuple[float, int]] = {
    "A>>B": (WIN, STRONG_WEIGHT), "A>B": (WIN, 1), "A=B": (TIE, 1), "B>A": (LOSS, 1), "B>>A": (LOSS, STRONG_WEIGHT),
}
ARENA_HARD_VERDICTS: tuple[str, ...] = tuple(_SHOWN)


def _model_battles(verdict: str, game: int, weight: int) -> tuple[float, int]:
    """The model's outcome in one game and how many battles it counts for (game 1 shows the baseline as A)."""
    outcome, battles = _SHOWN[verdict]
    if battles > 1:
        battles = weight
    return (outcome if game == 2 else 1.0 - outcome), battles


def arena_hard_record(
    question: str, model: str, baseline: str, g1: str | None, g2: str | None, *, rule: Rule, weight: int = STRONG_WEIGHT
) -> Record:
    """Arena-Hard's rule (``rule`` ``arena-hard-v0.1`` or ``arena-hard-v2.0``) on one record; ``g1``/``g2`` are the
    games' verdicts on the order shown (``"A>>B"`` .. ``"B>>A"``; None: none), game 1 showing the baseline as A."""
    games = [(g, n) for g, n in ((g1, 1), (g2, 2)) if g is not None]
    both = len(games) == 2
    if rule == "arena-hard-v2.0" and not both:
        games = []
    units: list[Unit] = []
    outcomes = []
    for verdict, number in games:
        if verdict not in _SHOWN:
            raise ValueError(f"verdict {verdict!r} is none of {', '.join(ARENA_HARD_VERDICTS)}")
        outcome, battles = _model_battles(verdict, number, weight)
        outcomes.append(outcome)
        units.extend(Unit(question, model, baseline, outcome) for _ in range(battles))
    disagree = both and outcomes[0] != outcomes[1]
    return Record(question, (model, baseline), tuple(units), both, disagree)


# AlpacaEval ----------------------------------------------------------------------------------
def alpacaeval_record(instruction: str, model: str, baseline: str, preference: float | None) -> Record:
    """One AlpacaEval annotation: ``preference`` 1-2 (None: none, dropped), the model being generator_2."""
    if preference is None:
        return Record(instruction, (model, baseline), (), False, False)
    if not 1 <= preference <= 2:
        raise ValueError(f"preference {preference!r} is not between 1 and 2")
    return Record(instruction, (model, baseline), (Unit(instruction, model, baseline, preference - 1),), False, False)


def resolve(rule: Rule, games: Sequence[tuple[str, str, str, str | None, str | None]], *, weight: int = STRONG_WEIGHT) -> list[Record]:
    """Each ``(question, first model, second model, game 1 verdict, game 2 verdict)`` resolved by ``rule``.

    FastChat: (question, model_1, model_2, g1, g2); Arena-Hard: (question, model, baseline, g1, g2).
    """
    if rule not in RULES or rule in ONE_GAME:
        raise ValueError(f"rule must be one of {', '.join(r for r in RULES if r not in ONE_GAME)} (games in both "
                         f"orders); got {rule!r}")
    if rule == "fastchat":
        return [fastchat_record(*g) for g in games]
    return [arena_hard_record(*g, rule=rule, weight=weight) for g in games]
