"""FastChat ``llm_judge`` judgment files (MT-Bench): ``fastchat-pair@1`` and ``fastchat-single@1``.

FastChat's ``gen_judgment.py`` writes ``model_judgment/<judge>_pair.jsonl``:
one JSON object per (question, model pair, turn) holding two games, the
judge's output with ``model_1`` shown as Assistant A (``g1_judgment``) and
with the two swapped (``g2_judgment``). Each game is one judge output, read
by ``--parser`` (``mtbench-pair@1``); its key names the models in the order
shown, so that the label ``A`` always means the model named first in the key.
``fastchat-single@1`` reads ``<judge>_single.jsonl`` (one rating a line, for
``mtbench-single@2``, FastChat's reading). Registered through the ``replicate.readers`` entry point ``fastchat``.
"""

from __future__ import annotations

import inspect
from typing import Iterator

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, SourceRule
from replicate.reading.jsonl import json_objects
from replicate.reading.stream import describe, first_json, key_text
from replicate_parsers.mtbench import PAIR_VERDICTS

_IDS = ("question_id", "model_1", "model_2", "turn")
_GAMES = ("g1_judgment", "g2_judgment")
#: show_result.py's rules: a pairwise record with an "error" winner in either game is dropped, a rating of -1 too.
_PAIR_RULE = SourceRule("intersect", "FastChat's show_result.py drops a pairwise record whose winner in either game "
                                     "is 'error' (no verdict found)")
_SINGLE_RULE = SourceRule("intersect", "FastChat's show_result.py drops a rating of -1 (none found) from its mean")


def _sniff_pair(head: bytes, options: ReadOptions) -> Match:
    _, obj = first_json(head, b"{")
    if isinstance(obj, dict) and all(k in obj for k in ("question_id", "model_1", "model_2", *_GAMES)):
        return "yes"
    return "no"


def _sniff_single(head: bytes, options: ReadOptions) -> Match:
    _, obj = first_json(head, b"{")
    if isinstance(obj, dict) and all(k in obj for k in ("question_id", "model", "judgment", "score")):
        return "yes"
    return "no"


def _id(obj: dict, name: str, src: Source, lineno: int) -> str:
    if name not in obj:
        raise src.bad(f"record lacks {name!r}", lineno)
    text = key_text(obj[name])
    if text is None:
        raise src.bad(f"{name!r} must be a string or an integer, got {describe(obj[name])}", lineno)
    return text


def _output(obj: dict, name: str, src: Source, lineno: int) -> str | None:
    """The judge's raw output in field ``name`` (None, warned, when it is null)."""
    if name not in obj:
        raise src.bad(f"record lacks {name!r} (the judge's raw output)", lineno)
    output = obj[name]
    if output is None:
        src.warn("null-output", f"{name!r} is null (read as unparsed)", lineno)
    elif type(output) is not str:
        raise src.bad(f"{name!r} must be a string, got {describe(output)}", lineno)
    return output


def _records(src: Source) -> Iterator[Record]:
    """FastChat llm_judge pairwise judgments (MT-Bench's
    ``model_judgment/<judge>_pair.jsonl``): one JSON object per line with
    ``question_id``, ``model_1``, ``model_2``, ``g1_winner``, ``g2_winner``,
    ``judge`` ([judge model, prompt name]), ``g1_user_prompt``,
    ``g1_judgment``, ``g2_user_prompt``, ``g2_judgment``, ``turn`` and
    ``tstamp``.

    Each line gives two items, one per game, keyed by the models in the
    order the judge saw them: game 1 (``g1_judgment``, model_1 shown as
    Assistant A) is keyed (question_id, model_1, model_2, turn), game 2
    (``g2_judgment``, the answers swapped) is keyed (question_id, model_2,
    model_1, turn). The key parts are named question_id, model_a, model_b,
    turn: a verdict A is for the model_a of the key. Raw output: the
    game's judgment, read by ``--parser`` (mtbench-pair@1 for the [[A]]
    format, mtbench-pair-scores@1 for the two-score [[rating_a,rating_b]]
    format); null reads as unparsed. FastChat's own ``g1_winner``/``g2_winner`` are not taken as
    labels (name a parser, or read them with ``fastchat-pair-winners@1``; ``replicate pairwise``
    counts either by model with FastChat's rule). The records carry no gold: give it with
    ``--gold`` keyed the same way, in the order shown (a human verdict for
    model_1 against model_2 is the gold of game 1; game 2's gold is the
    same verdict with A and B swapped; an item without gold is left out and
    reported). Refused, naming file and line: a line that is not a JSON
    object, a missing question_id, model_1, model_2, turn or judgment
    field, an id that is not a string or integer, a judgment that is not
    text, a torn last line; a key seen twice with another judgment is an
    error naming both lines. Other fields are ignored."""
    for lineno, obj in json_objects(src, fields=(*_IDS, *_GAMES)):  # a taken key twice: refused (or warned)
        qid, m1, m2, turn = (_id(obj, name, src, lineno) for name in _IDS)
        for game, key in zip(_GAMES, ((qid, m1, m2, turn), (qid, m2, m1, turn))):
            yield Record(key, lineno, output=_output(obj, game, src, lineno))


#: Per game, FastChat's recorded winner -> the verdict on the order shown (game 1 shows model_1 as A).
_SHOWN = ({"model_1": "A", "model_2": "B", "tie": "tie"}, {"model_2": "A", "model_1": "B", "tie": "tie"})
_WINNERS = ("g1_winner", "g2_winner")


def _sniff_none(head: bytes, options: ReadOptions) -> Match:
    return "no"  # the same files as fastchat-pair@1: only read when named


def _winner(obj: dict, game: int, src: Source, lineno: int) -> str | None:
    name = _WINNERS[game]
    if name not in obj:
        raise src.bad(f"record lacks {name!r} (the winner FastChat recorded)", lineno)
    value = obj[name]
    if value == "error":
        return None
    if type(value) is not str or value not in _SHOWN[game]:
        raise src.bad(f"{name!r} must be 'model_1', 'model_2', 'tie' or 'error', got {describe(value)}", lineno)
    return _SHOWN[game][value]


def _winner_records(src: Source) -> Iterator[Record]:
    """The winners FastChat recorded in its pairwise judgment files
    (``model_judgment/<judge>_pair.jsonl``): ``g1_winner`` and ``g2_winner``,
    the reading of the released ``gen_judgment.py`` (``run_judge_pair``),
    already mapped to ``model_1``, ``model_2``, ``tie`` or ``error``. Same
    files, keys and refusals as ``fastchat-pair@1``, but a line needs the two
    winners instead of the judgments; never chosen by content (name it with
    ``--reader`` or ``--gold-reader``).

    Each winner is turned back into a verdict on the order shown, as
    ``fastchat-pair@1``'s keys give it: game 1 (key question_id, model_1,
    model_2, turn) ``model_1`` is ``A``, ``model_2`` is ``B``; game 2 (key
    question_id, model_2, model_1, turn) ``model_2`` is ``A``, ``model_1`` is
    ``B``; ``tie`` is ``tie``; ``error`` (no verdict found) is unparsed.
    Labels: the set of ``mtbench-pair@1`` (A, B, tie). Used as a run, it is
    the released reading (shown as ``fastchat-winners``; ``replicate
    pairwise`` counts it by FastChat's rule); as ``--gold``, FastChat's own
    verdicts, against which another reading is counted right or wrong. A
    winner that is none of the four strings is refused."""
    for lineno, obj in json_objects(src, fields=(*_IDS, *_WINNERS)):
        qid, m1, m2, turn = (_id(obj, name, src, lineno) for name in _IDS)
        for game, key in enumerate(((qid, m1, m2, turn), (qid, m2, m1, turn))):
            yield Record(key, lineno, label=_winner(obj, game, src, lineno))


def _single_records(src: Source) -> Iterator[Record]:
    """FastChat llm_judge single-answer judgments (MT-Bench's
    ``model_judgment/<judge>_single.jsonl``): one JSON object per line with
    ``question_id``, ``model``, ``judge`` ([judge model, prompt name]),
    ``user_prompt``, ``judgment``, ``score``, ``turn`` and ``tstamp``.

    Key: (question_id, model, turn). Raw output: ``judgment``, read by
    ``--parser`` (mtbench-single@2, FastChat's own reading: the rating it
    records, 8.5 and 0 included, which ``replicate mtbench`` averages as
    FastChat's ``show_result.py`` does; mtbench-single@1 is a stricter
    reading, whole ratings 1-10 only); null reads as unparsed. FastChat's
    own ``score`` (its reading, -1 when it found none) is not taken as the
    label (name a parser). The records carry no gold: give it with
    ``--gold`` keyed (question_id, model, turn), e.g. human ratings 1-10.
    Refused, naming file and line: a line that is not a JSON object, a
    missing question_id, model, turn or judgment, an id that is not a
    string or integer, a judgment that is not text, a torn last line; a key
    seen twice with another judgment is an error naming both lines. Other
    fields are ignored."""
    for lineno, obj in json_objects(src, fields=("question_id", "model", "turn", "judgment")):
        key = tuple(_id(obj, name, src, lineno) for name in ("question_id", "model", "turn"))
        yield Record(key, lineno, output=_output(obj, "judgment", src, lineno))


FASTCHAT_PAIR = Reader(
    "fastchat-pair@1",
    "FastChat llm_judge pairwise judgments (MT-Bench *_pair.jsonl): two games a line, keyed in the order shown.",
    _sniff_pair,
    _records,
    yields="outputs",
    key_names=("question_id", "model_a", "model_b", "turn"),
    has_gold=False,
    format="fastchat-pair",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=(),
    streams=True,
    parsers=("mtbench-pair@1", "mtbench-pair-scores@1"),
    source_rule=_PAIR_RULE,
)

FASTCHAT_WINNERS = Reader(
    "fastchat-pair-winners@1",
    "FastChat pairwise judgments: the g1_winner/g2_winner FastChat recorded, as verdicts on the order shown; only when named.",
    _sniff_none,
    _winner_records,
    yields="labels",
    label_set=PAIR_VERDICTS,
    key_names=("question_id", "model_a", "model_b", "turn"),
    has_gold=False,
    decided="fastchat-winners",
    format="fastchat-pair",
    details=inspect.cleandoc(_winner_records.__doc__ or ""),
    options=(),
    streams=True,
    source_rule=_PAIR_RULE,
)

FASTCHAT_SINGLE = Reader(
    "fastchat-single@1",
    "FastChat llm_judge single-answer judgments (MT-Bench *_single.jsonl): question, model, turn, raw judgment.",
    _sniff_single,
    _single_records,
    yields="outputs",
    key_names=("question_id", "model", "turn"),
    has_gold=False,
    format="fastchat-single",
    details=inspect.cleandoc(_single_records.__doc__ or ""),
    options=(),
    streams=True,
    parsers=("mtbench-single@2", "mtbench-single@1"),
    source_rule=_SINGLE_RULE,
)

#: The entry point ``fastchat = "replicate_parsers.fastchat:READERS"`` loads this list.
READERS: list[Reader] = [FASTCHAT_PAIR, FASTCHAT_WINNERS, FASTCHAT_SINGLE]
