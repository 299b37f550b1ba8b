"""mtbench-pair-scores@1 against a plain transcription of FastChat's run_judge_pair ([[rating_a,rating_b]]).

The parser reads the two scores without evaluating anything; here the released
steps are run as written (``re.search`` of the two patterns, ``ast.literal_eval``
of each group, then the TIE_DELTA rule) on seeded generated outputs, and the
parser must give the same verdict, and unparsed exactly where FastChat records
"error" or raises.
"""

from __future__ import annotations

import ast
import random
import re

from replicate.parsing import PARSERS

# FastChat's patterns and tie delta, copied as the released script writes them.
TWO_SCORE = re.compile("\\[\\[(\\d+\\.?\\d*),\\s?(\\d+\\.?\\d*)\\]\\]")
TWO_SCORE_BACKUP = re.compile("\\[(\\d+\\.?\\d*),\\s?(\\d+\\.?\\d*)\\]")
TIE_DELTA = 0.1

TOKENS = [
    "[[", "]]", "[", "]", ",", ", ", ",  ", ",\n", " ", "\u00a0", ".", "0", "00", "07", "07.0", "1", "1.1", "2.1",
    "7", "7.9", "8", "8.", "8.05", "8.1", "9", "10", "11", "100", "0.3", "0.2", "-", "/", "\u0668", "\uff17",
    "A", "[[A]]", "x",
]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 14))) for _ in range(n)]


TEXTS = _texts(8000, seed=20230609) + ["[[8, 7]]", "[[1.1, 1]]", "[[8.1, 8]]", "[1, 2] [8, 7]", "[[07, 8]]"]


def fastchat_two_scores(judgment: str) -> str | None:
    """run_judge_pair's reading for output_format [[rating_a,rating_b]] (None: "error" or a crash)."""
    match = re.search(TWO_SCORE, judgment)
    if not match:
        match = re.search(TWO_SCORE_BACKUP, judgment)
    if not match:
        return None  # FastChat: winner "error"
    try:
        scores = [ast.literal_eval(s.strip()) for s in match.groups()]
        if abs(scores[0] - scores[1]) <= TIE_DELTA:
            return "tie"
    except (SyntaxError, ValueError, OverflowError):
        return None  # FastChat crashes here
    return "A" if scores[0] > scores[1] else "B"


def test_agrees_with_fastchat_on_generated_outputs():
    parser = PARSERS.get("mtbench-pair-scores@1")
    names = parser.label_set.names
    disagree = [t for t in TEXTS if (None if (c := parser(t)) is None else names[c]) != fastchat_two_scores(t)]
    assert not disagree, disagree[:5]
    # the generator reaches every verdict and the refusals of a matched pair
    assert {parser(t) for t in TEXTS} == {None, 0, 1, 2}
    assert any(fastchat_two_scores(t) is None and TWO_SCORE_BACKUP.search(t) for t in TEXTS)


def test_same_label_set_as_the_bracket_verdict_parser():
    """Gold written as A / B / tie serves both pairwise formats, and parsers audit can set them side by side."""
    scores, pair = PARSERS.get("mtbench-pair-scores@1"), PARSERS.get("mtbench-pair@1")
    assert scores.label_set == pair.label_set and scores.labels == (0, 1, 2)
    assert PARSERS.origin("mtbench-pair-scores@1") == "replicate-audit"


def test_never_raises_on_noise():
    rng = random.Random(7)
    parser = PARSERS.get("mtbench-pair-scores@1")
    for _ in range(3000):
        text = "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 40)))
        assert parser(text) in (None, 0, 1, 2)
    assert parser("[[" + "9" * 5000 + ", 1]]") is None  # literal_eval refuses an int of more than 4300 digits
