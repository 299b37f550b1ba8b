"""Chatbot Arena battle logs: ``arena-battles@1`` (human pairwise votes, JSON, JSONL or Parquet).

Registered through the ``replicate.readers`` entry point ``arena``. The layout
is FastChat's ``clean_battle_data.py`` output (``clean_battle_<date>.json``),
which the public Arena releases (``arena-human-preference-*``) and MT-Bench's
human judgments (``mt_bench_human_judgments``) share: one record per battle
with ``model_a``, ``model_b``, ``winner`` and, where the release has them,
``question_id``, ``judge``, ``turn``, ``anony``, ``language``, ``tstamp``,
``conversation_a``/``conversation_b``.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Iterator

import orjson

from replicate.labels import LabelSet
from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source
from replicate.reading.jsonl import json_objects
from replicate.reading.parquet import is_parquet, parquet_columns, parquet_file, parquet_rows
from replicate.reading.stream import describe, key_text

#: The four outcomes Arena records, as its labels (``tie (bothbad)``: both answers bad).
WINNERS = LabelSet.categorical("model_a", "model_b", "tie", "tie (bothbad)")
KEY_NAMES = ("question_id", "model_a", "model_b", "turn", "judge", "vote")
_NEEDED = ("model_a", "model_b", "winner")
_OPTIONAL = ("question_id", "turn", "judge")


#: The first record's winner, one of the four (a gold JSONL keyed by model_a and model_b with winners A/B is not a battle log).
_WINNER = re.compile(rb'"winner"\s*:\s*"(?:model_a|model_b|tie|tie \(bothbad\))"')


def _sniff(head: bytes, options: ReadOptions) -> Match:
    cols = parquet_columns(head)
    if cols is not None:
        return "yes" if all(c in cols for c in _NEEDED) else "no"
    body = head.lstrip()
    if not body.startswith((b"[", b"{")):
        return "no"
    has_models = all(re.search(rb'"%s"\s*:' % c.encode(), head) for c in ("model_a", "model_b"))
    first = head.find(b'"winner"')  # the first record's winner (a key: inside a string its quotes are escaped)
    return "yes" if has_models and first >= 0 and _WINNER.match(head, first) else "no"


def _part(obj: dict, name: str, src: Source, lineno: int) -> str:
    value = obj.get(name)
    if name == "judge" and isinstance(value, list):  # FastChat's [judge model, prompt] in its gpt4_pair records
        return orjson.dumps(value).decode()
    if value is None:
        return ""
    text = key_text(value)
    if text is None:
        raise src.bad(f"{name!r} must be a string or an integer, got {describe(value)}", lineno)
    return text


def _battle(obj: Any, src: Source, lineno: int, votes: dict[tuple[str, ...], int]) -> Record:
    if not isinstance(obj, dict):
        raise src.bad(f"expected a battle (a JSON object), got {describe(obj)}", lineno)
    for name in _NEEDED:
        if obj.get(name) is None:
            raise src.bad(f"battle lacks {name!r}", lineno)
    a, b, winner = obj["model_a"], obj["model_b"], obj["winner"]
    for name, value in (("model_a", a), ("model_b", b)):
        if type(value) is not str or not value:
            raise src.bad(f"{name!r} must be a model's name, got {describe(value)}", lineno)
    if a == b:
        raise src.bad(f"model_a and model_b are both {a!r}", lineno)
    if winner not in WINNERS.names:
        raise src.bad(f"winner {winner!r} is none of {', '.join(map(repr, WINNERS.names or ()))}", lineno)
    head = (_part(obj, "question_id", src, lineno), a, b, _part(obj, "turn", src, lineno),
            _part(obj, "judge", src, lineno))
    votes[head] = votes.get(head, 0) + 1
    return Record((*head, str(votes[head])), lineno, label=winner)


def _records(src: Source) -> Iterator[Record]:
    """Chatbot Arena battles as FastChat's ``clean_battle_data.py`` writes them
    and the Arena's public releases carry them (``clean_battle_<date>.json``, a
    JSON array; the same records a line in JSONL; the ``arena-human-preference``
    datasets' Parquet, which needs pyarrow), and MT-Bench's expert votes
    (``mt_bench_human_judgments``, the same layout): per battle ``model_a``,
    ``model_b``, ``winner`` (``model_a``, ``model_b``, ``tie``, ``tie
    (bothbad)``) and, when given, ``question_id``, ``turn``, ``judge`` (the
    voter: ``arena_user_...``, ``expert_0``; FastChat's ``[judge, prompt]``
    list kept as its JSON), ``anony``, ``language``, ``tstamp``,
    ``conversation_a``/``conversation_b``.

    Key: (question_id, model_a, model_b, turn, judge, vote), a missing
    question_id, turn or judge empty; ``vote`` numbers the battles of one
    (question_id, model_a, model_b, turn, judge) in the file (1, 2, ...), so
    that a voter's repeated battles all count. Labels: the winner as
    recorded, decided (no parser; ``tie (bothbad)`` kept apart, counted as a
    tie by ``replicate pairwise``, as Arena's Elo and Bradley-Terry fits
    count it; ``anony`` is not read: every battle counts).
    Refused, naming file and line (or Parquet row): a record that is not an
    object, lacking model_a, model_b or winner, a model that is not a
    non-empty string, the same model on both sides, a winner that is none of
    the four, a question_id, turn or judge that is not a string or an
    integer; a JSON array cut short. Other fields are ignored."""
    votes: dict[tuple[str, ...], int] = {}
    if is_parquet(src.data[:4]):
        pf = parquet_file(src)
        cols = set(pf.schema_arrow.names)
        missing = [c for c in _NEEDED if c not in cols]
        if missing:
            raise src.bad(f"no {', '.join(missing)} column (battles carry model_a, model_b and winner); "
                          f"columns: {', '.join(sorted(cols))}")
        for row, values in parquet_rows(src, [c for c in (*_NEEDED, *_OPTIONAL) if c in cols], file=pf):
            yield _battle(values, src, row, votes)
        return
    if src.data.lstrip()[:1] == b"[":
        from replicate_parsers.lm_eval_layout import array_objects  # here: listing readers needs no numpy

        battles = array_objects(src, "battle", (*_NEEDED, *_OPTIONAL))
        src.lines_total = len(battles)
        for lineno, obj in battles:
            yield _battle(obj, src, lineno, votes)
        return
    for lineno, obj in json_objects(src, " (one battle)", fields=(*_NEEDED, *_OPTIONAL)):
        yield _battle(obj, src, lineno, votes)


ARENA_BATTLES = Reader(
    "arena-battles@1",
    "Chatbot Arena battle logs (clean_battle JSON, JSONL, Parquet) and MT-Bench human judgments: each vote's winner.",
    _sniff,
    _records,
    yields="labels",
    label_set=WINNERS,
    key_names=KEY_NAMES,
    has_gold=False,
    decided="arena-winner",
    format="arena-battles",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=(),
)

#: The entry point ``arena = "replicate_parsers.arena_battles:READERS"`` loads this list.
READERS: list[Reader] = [ARENA_BATTLES]
