"""Arena-Hard-Auto judgment files: ``arena-hard-judgment@1`` and ``arena-hard-score@1``.

Arena-Hard-Auto's ``gen_judgment.py`` writes
``data/<bench>/model_judgment/<judge>/<model>.jsonl``: one JSON object per
question judged for one model against the baseline, holding two games, the
judge's reading with the baseline shown as Assistant A (game 1) and with the
two answers swapped (game 2). v0.1 writes ``question_id``, ``model``,
``judge``, ``games`` (each ``user_prompt``, ``judgment`` text, ``score``);
v2.0 writes ``uid``, ``category``, ``judge``, ``model``, ``baseline``,
``games`` (each ``score``, ``judgment`` an object whose ``answer`` is the
text, ``prompt``; a game is null when the judge's call failed).

Both readers key each game by (question id, model, game number), so that a
verdict ``A`` means the baseline in game 1 and the model in game 2.
``arena-hard-judgment@1`` gives the judge's text to ``--parser``
(``arena-hard@1``, ``arena-hard-last@1``); ``arena-hard-score@1`` gives the
``score`` the file recorded, as decided labels (the released reading).
Registered through the ``replicate.readers`` entry point ``arena_hard``.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Iterator

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, SourceRule, first_line
from replicate.reading.jsonl import json_objects
from replicate.reading.stream import describe, first_json, key_text
from replicate_parsers.arena_hard import SPELLINGS, VERDICTS

#: The question id field of each layout, in the order looked for.
_ID_FIELDS = (("question_id", "v0.1"), ("uid", "v2.0"))
_KEY_NAMES = ("question_id", "model", "game")
#: show_result.py leaves a game without a verdict out of the battles (v0.1) or its whole record (v2.0).
_RULE = SourceRule("intersect", "Arena-Hard-Auto's show_result.py leaves a game without a verdict out of its battles "
                                "(v2.0: the question's whole record)")
# A first line longer than the sniffed head (two prompts with long answers) cannot be parsed;
# both releases write json.dumps of a dict whose id comes first and whose games list follows.
_HEAD = re.compile(rb'^\{"(?:question_id|uid)": .{0,4000}?"games": \[', re.DOTALL)


def _sniff(head: bytes, options: ReadOptions) -> Match:
    opens, obj = first_json(head, b"{")
    if not opens:
        return "no"
    if isinstance(obj, dict):
        has_id = any(name in obj for name, _ in _ID_FIELDS)
        return "yes" if has_id and "model" in obj and isinstance(obj.get("games"), list) else "no"
    line = first_line(head)
    return "yes" if line is not None and _HEAD.match(line) else "no"


def _sniff_none(head: bytes, options: ReadOptions) -> Match:
    return "no"  # the same files as arena-hard-judgment@1: only read when named


def _text_id(obj: dict, name: str, src: Source, lineno: int) -> str:
    if name not in obj:
        raise src.bad(f"record lacks {name!r}", lineno)
    text = key_text(obj[name])
    if text is None:
        raise src.bad(f"{name!r} must be a string or an integer, got {describe(obj[name])}", lineno)
    return text


def _games(src: Source) -> Iterator[tuple[int, tuple[str, str], int, dict | None]]:
    """(line, (question id, model), game number 1 or 2, game object or None) for every game."""
    id_field: str | None = None
    for lineno, obj in json_objects(src, fields=("question_id", "uid", "model", "games")):
        if id_field is None:
            for name, layout in _ID_FIELDS:
                if name in obj:
                    id_field = name
                    src.used["layout"] = layout
                    break
            else:
                raise src.bad("record lacks 'question_id' (Arena-Hard v0.1) or 'uid' (v2.0)", lineno)
            judge = obj.get("judge")
            if isinstance(judge, str):
                src.used["judge"] = judge
        qid = _text_id(obj, id_field, src, lineno)
        model = _text_id(obj, "model", src, lineno)
        if "games" not in obj:
            raise src.bad("record lacks 'games'", lineno)
        games = obj["games"]
        if not isinstance(games, list):
            raise src.bad(f"'games' must be a list of two games, got {describe(games)}", lineno)
        if len(games) != 2:
            raise src.bad(
                f"'games' holds {len(games)} game(s); a pairwise judgment holds 2 "
                "(game 1 the baseline shown as A, game 2 the answers swapped)", lineno)
        for number, game in enumerate(games, 1):
            if game is not None and not isinstance(game, dict):
                raise src.bad(f"game {number} must be a JSON object, got {describe(game)}", lineno)
            yield lineno, (qid, model), number, game


def _text(game: dict, number: int, src: Source, lineno: int) -> str | None:
    """The judge's text of one game: ``judgment`` itself (v0.1) or its ``answer`` (v2.0)."""
    if "judgment" not in game:
        raise src.bad(f"game {number} lacks 'judgment' (the judge's text)", lineno)
    value = game["judgment"]
    where = f"game {number}'s 'judgment'"
    if isinstance(value, dict):
        if "answer" not in value:
            raise src.bad(f"{where} is an object without 'answer' (the judge's text)", lineno)
        value, where = value["answer"], f"game {number}'s 'judgment.answer'"
    if value is None:
        src.warn("null-output", f"{where} is null (read as unparsed)", lineno)
    elif type(value) is not str:
        raise src.bad(f"{where} must be a string, got {describe(value)}", lineno)
    return value


def _records(src: Source) -> Iterator[Record]:
    """Arena-Hard-Auto judgment files
    (``data/<bench>/model_judgment/<judge>/<model>.jsonl``), as its
    ``gen_judgment.py`` writes them: one JSON object per question judged for
    one model against the baseline. v0.1: ``question_id``, ``model``,
    ``judge``, ``games``, each game ``user_prompt``, ``judgment`` (the judge's
    text, every attempt joined) and ``score``. v2.0: ``uid``, ``category``,
    ``judge``, ``model``, ``baseline``, ``games``, each game ``score``,
    ``judgment`` (an object: ``answer`` is the text, ``thought`` a reasoning
    judge's thinking) and ``prompt``.

    Each line gives two items, one per game, keyed (question_id, model,
    game): game 1 (the first of ``games``) shows the baseline as Assistant A
    and the model as B; game 2 swaps them. The two games are two judge calls
    on two prompts, so they are two items: a verdict A is the baseline's in
    game 1 and the model's in game 2, and pooling them would mix the two.
    The question id is ``question_id`` (v0.1) or ``uid`` (v2.0), whichever
    the file's first record has (every record must have it); provenance keeps
    the layout and the first record's judge. Raw output: the game's judgment
    text, read by ``--parser`` (``arena-hard@1`` for v0.1,
    ``arena-hard-last@1`` for v2.0); a null text, and a null game (v2.0
    writes one when the judge's call failed), read as unparsed, warned. The
    recorded ``score`` is not taken (read it with ``arena-hard-score@1``).

    No gold in the file (Arena-Hard has no human verdicts): give it with
    ``--gold``, keyed the same way: a reference judge's own file read with
    ``--gold-reader arena-hard-score@1`` (its recorded verdicts), or a gold
    JSONL of verdict names keyed (question_id, model, game). Refused, naming
    file and line: a line that is not a JSON object, a torn last line, a
    missing id, model or games, an id that is not a string or integer,
    ``games`` that is not a list of two, a game that is not an object, a game
    without ``judgment`` (or a v2.0 judgment without ``answer``), a text that
    is not a string; the same (question, model, game) twice with another
    judgment. Other fields are ignored."""
    for lineno, key, number, game in _games(src):
        if game is None:
            src.warn("null-output", f"game {number} is null (the judge's call failed; read as unparsed)", lineno)
            text = None
        else:
            text = _text(game, number, src, lineno)
        yield Record((*key, str(number)), lineno, output=text)


def _score(game: dict, number: int, src: Source, lineno: int) -> int | None:
    if "score" not in game:
        raise src.bad(f"game {number} lacks 'score' (the verdict Arena-Hard recorded)", lineno)
    value: Any = game["score"]
    if value is None:
        return None
    if type(value) is not str:
        raise src.bad(f"game {number}'s 'score' must be a verdict string or null, got {describe(value)}", lineno)
    grade = SPELLINGS.get(value)
    if grade is None:
        src.warn("score-not-a-verdict", f"game {number}'s score {value!r} is none of the ten verdicts "
                 "show_result.py scores (read as unparsed)", lineno)
    return grade


def _score_records(src: Source) -> Iterator[Record]:
    """The verdicts Arena-Hard-Auto recorded in its judgment files: each
    game's ``score`` (``A>B``, ``B>>A``, ...), the reading of the released
    ``gen_judgment.py``. Same files, keys and refusals as
    ``arena-hard-judgment@1``, but a game needs ``score`` instead of
    ``judgment``; never chosen by content (name it with ``--reader`` or
    ``--gold-reader``).

    Labels: the five-verdict scale of ``arena-hard@1`` (grade 0 ``B>>A`` ..
    4 ``A>>B``), the ten spellings show_result.py scores mapped onto it
    (``B<A`` is ``A>B``). A null score (no verdict, or several different
    ones, in v0.1) and a null game read as unparsed; a score string that is
    none of the ten (``A``, which show_result.py cannot score) is unparsed
    and warned; a score that is not a string is refused. Used as a run, it
    is the released reading (no parser: shown as ``arena-hard-score``); as
    ``--gold``, a reference judge's verdicts, against which ``compare``
    counts another judge's game right or wrong."""
    for lineno, key, number, game in _games(src):
        if game is None:
            src.warn("null-output", f"game {number} is null (the judge's call failed; read as unparsed)", lineno)
            label = None
        else:
            label = _score(game, number, src, lineno)
        yield Record((*key, str(number)), lineno, label=label)


ARENA_HARD_JUDGMENT = Reader(
    "arena-hard-judgment@1",
    "Arena-Hard-Auto judgment files (v0.1, v2.0): the judge's text of two games a line, keyed by game.",
    _sniff,
    _records,
    yields="outputs",
    key_names=_KEY_NAMES,
    has_gold=False,
    format="arena-hard-judgment",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=(),
    streams=True,
    parsers=("arena-hard@1", "arena-hard-last@1"),
    source_rule=_RULE,
)

ARENA_HARD_SCORE = Reader(
    "arena-hard-score@1",
    "Arena-Hard-Auto judgment files: each game's recorded score (A>B ...) as labels; only when named.",
    _sniff_none,
    _score_records,
    yields="labels",
    label_set=VERDICTS,
    key_names=_KEY_NAMES,
    has_gold=False,
    decided="arena-hard-score",
    format="arena-hard-judgment",
    details=inspect.cleandoc(_score_records.__doc__ or ""),
    options=(),
    streams=True,
    source_rule=_RULE,
)

#: The entry point ``arena_hard = "replicate_parsers.arena_hard_judgment:READERS"`` loads this list.
READERS: list[Reader] = [ARENA_HARD_JUDGMENT, ARENA_HARD_SCORE]
