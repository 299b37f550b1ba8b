"""Which item keys are games of both-order pairwise judgments, and which game an item is (pure, a leaf).

- ``question_id, model_a, model_b, turn`` (``fastchat-pair@1``): a record's two
  games are the keys (q, m1, m2, t) and (q, m2, m1, t); the verdict is on the
  key's order (A: model_a, shown first). The key does not say which game came
  first (FastChat's rule does not need it).
- ``question_id, model, game`` (the Arena-Hard readers): game ``1`` shows the
  baseline as A, game ``2`` the model.
"""

from __future__ import annotations

from typing import Sequence

FASTCHAT_KEY = ("question_id", "model_a", "model_b", "turn")
ARENA_HARD_KEY = ("question_id", "model", "game")

#: What a verdict of such items is about, said wherever their labels are counted by position.
POSITIONS_NOTE = ("the labels are verdicts on the order shown (A: the answer shown first), so {what}; they describe "
                  "positions, not models: 'replicate pairwise' resolves both games of a question by model")


def is_pairwise(key_names: Sequence[str] | None) -> bool:
    """Whether items keyed ``key_names`` are games of both-order pairwise judgments."""
    return key_names is not None and tuple(key_names) in (FASTCHAT_KEY, ARENA_HARD_KEY)


def game_index(key_names: Sequence[str] | None) -> int | None:
    """The index of the key part that names the game (Arena-Hard's ``game``), or None when the key has none."""
    names = tuple(key_names or ())
    return names.index("game") if names == ARENA_HARD_KEY else None


#: AlpacaEval's annotations (``alpacaeval-annotations@1``): one annotation per instruction, the model as generator_2.
ALPACAEVAL_KEY = ("instruction", "generator_1", "generator_2")
