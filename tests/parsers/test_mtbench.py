"""The MT-Bench parsers against a plain transcription of FastChat's own code.

``mtbench-single@1`` reads the rating without evaluating anything; here the
released steps are run as written (``re.search`` of the two patterns, then
``ast.literal_eval`` of the first match) on seeded generated outputs, and the
parser must give the same whole rating 1-10, and unparsed exactly where
FastChat gives -1, a value outside 1-10, a fraction, or raises.
"""

from __future__ import annotations

import ast
import random
import re

from replicate.labels import LabelSet
from replicate.parsing import PARSERS

# FastChat's patterns, copied as the released script compiles them.
ONE_SCORE = re.compile("\\[\\[(\\d+\\.?\\d*)\\]\\]")
ONE_SCORE_BACKUP = re.compile("\\[(\\d+\\.?\\d*)\\]")

TOKENS = [
    "[[", "]]", "[", "]", "[[[", "]]]", "Rating:", " ", "\n", ".", "..", "0", "00", "07", "1", "5", "7", "9", "10",
    "11", "100", "7.5", "7.0", "7.", "0.5", "-", "+", "/", ",", "\u0667", "\uff17", "\u0660", "A", "B", "C",
    "[[A]]", "[[B]]", "[[C]]", "[[a]]", "x",
]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 12))) for _ in range(n)]


TEXTS = _texts(6000, seed=20240610) + ["Rating: [[7]]", "[1] then [8]", "[[07]]", "[[00]]", "[[7.5]]", "[[0]][[7]]"]


def fastchat_single(judgment: str) -> int | None:
    """run_judge_single's reading, then the label it stands for on 1-10 (None: no label)."""
    match = re.search(ONE_SCORE, judgment)
    if not match:
        match = re.search(ONE_SCORE_BACKUP, judgment)
    if not match:
        return None  # FastChat: -1
    try:
        rating = ast.literal_eval(match.groups()[0])
    except (SyntaxError, ValueError):
        return None  # FastChat crashes here
    if float(rating).is_integer() and 1 <= rating <= 10:
        return int(rating)
    return None  # 7.5, 0, 11: FastChat keeps them; no label of 1-10


def fastchat_rating(judgment: str) -> float | None:
    """run_judge_single's recorded score, as written, None for its -1 (and where literal_eval raises)."""
    match = re.search(ONE_SCORE, judgment)
    if not match:
        match = re.search(ONE_SCORE_BACKUP, judgment)
    if not match:
        return None
    try:
        return ast.literal_eval(match.groups()[0])
    except (SyntaxError, ValueError):
        return None


def fastchat_pair(judgment: str) -> str | None:
    if "[[A]]" in judgment:
        return "A"
    elif "[[B]]" in judgment:
        return "B"
    elif "[[C]]" in judgment:
        return "tie"
    return None  # FastChat: "error"


def test_single_agrees_with_fastchat_on_generated_outputs():
    parser = PARSERS.get("mtbench-single@1")
    disagree = [t for t in TEXTS if parser(t) != fastchat_single(t)]
    assert not disagree, disagree[:5]
    # the generator reaches matches, each kind of refusal and most of the scale
    got = {parser(t) for t in TEXTS}
    assert None in got and {1, 5, 7, 9, 10} <= got
    assert any(fastchat_single(t) is None and ONE_SCORE.search(t) for t in TEXTS)


def test_single_at_2_scores_as_fastchat_records_on_generated_outputs():
    parser = PARSERS.get("mtbench-single@2")
    for text in TEXTS:
        want = fastchat_rating(text)
        assert parser.score(text) == (None if want is None else float(want)), text
        whole = want is not None and float(want).is_integer() and 0 <= want <= 10
        assert parser(text) == (int(want) if whole else None), text
    scores = {parser.score(t) for t in TEXTS}
    assert {None, 0.0, 7.5, 11.0, 100.0} <= scores  # the generator reaches what @1 drops and FastChat keeps
    assert parser.score(None) is None and parser.score("Rating: [[8.5]]") == 8.5


def test_single_at_1_is_stricter_than_fastchat_and_says_so():
    strict, fastchat = PARSERS.get("mtbench-single@1"), PARSERS.get("mtbench-single@2")
    assert "stricter than FastChat" in strict.description and not strict.released
    assert "as FastChat records it" in fastchat.description and fastchat.released
    # a parser without its own value scores its label
    assert strict.score("Rating: [[7]]") == 7.0 and strict.score("Rating: [[8.5]]") is None
    from replicate.reading.contract import READERS
    assert READERS.get("fastchat-single@1").parsers[0] == "mtbench-single@2"


def test_pair_agrees_with_fastchat_on_generated_outputs():
    parser = PARSERS.get("mtbench-pair@1")
    names = parser.label_set.names
    for text in TEXTS:
        label = parser(text)
        assert (None if label is None else names[label]) == fastchat_pair(text), text
    assert {parser(t) for t in TEXTS} == {None, 0, 1, 2}


def test_label_sets():
    assert PARSERS.get("mtbench-single@2").label_set == LabelSet.ordinal(0, 10)
    single, pair = PARSERS.get("mtbench-single@1"), PARSERS.get("mtbench-pair@1")
    assert single.label_set == LabelSet.ordinal(1, 10) and single.labels == tuple(range(1, 11))
    assert single.label_set.is_ordinal
    assert pair.label_set == LabelSet.categorical("A", "B", "tie") and not pair.label_set.is_ordinal
    assert pair.labels == (0, 1, 2)
    assert [pair.label_set.show(pair(t)) for t in ("[[A]]", "[[B]]", "[[C]]")] == ["A", "B", "tie"]
    # gold written as text maps onto the same codes
    assert [pair.label_set.code(g) for g in ("A", "B", "tie", "C", "model_1")] == [0, 1, 2, None, None]
    assert PARSERS.origin("mtbench-single@1") == PARSERS.origin("mtbench-pair@1") == "replicate-audit"
