"""The Arena-Hard parsers against a plain transcription of the released code.

Both versions of ``get_score`` and ``show_result``'s verdict table are run as
written on seeded generated outputs; each parser must give the grade of the
verdict the script keeps, and unparsed exactly where the script keeps None or
its table has no entry (a KeyError there).
"""

from __future__ import annotations

import random
import re

from replicate.labels import LabelSet
from replicate.parsing import PARSERS

PATTERN_V01 = "\\[\\[([AB<>=]+)\\]\\]"  # config/judge_config.yaml regex_pattern
PATTERNS_V2 = ["\\[\\[([AB<>=]+)\\]\\]", "\\[([AB<>=]+)\\]"]  # config/arena-hard-v2.0.yaml regex_patterns
# show_result.py's label_to_score keys, and the grade of each on the scale B>>A .. A>>B
TABLE = {"A>B": 3, "A>>B": 4, "A=B": 2, "A<<B": 0, "A<B": 1, "B>A": 1, "B>>A": 0, "B=A": 2, "B<<A": 4, "B<A": 3}

TOKENS = ["[[", "]]", "[", "]", "A", "B", "a", "b", "<", ">", "=", ">>", "<<", " ", "\n", "C", "x", "[[A>B]]",
          "[[B>A]]", "[[A=B]]", "[[A>>B]]", "[[B>>A]]", "[[B<<A]]", "[[a>>b]]", "[B<A]", "\u226b", "\uff21"]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 14))) for _ in range(n)]


TEXTS = _texts(6000, seed=20240612)


def released_v01(judgment: str) -> int | None:
    matches = re.compile(PATTERN_V01).findall(judgment)
    matches = [m for m in matches if m != ""]
    if len(set(matches)) == 0:
        return None
    elif len(set(matches)) == 1:
        score = matches[0].strip("\n")
    else:
        return None
    return TABLE.get(score)  # show_result: label_to_score[score] raises KeyError otherwise


def released_v2(judgment: str) -> int | None:
    for pattern in PATTERNS_V2:
        matches = re.compile(pattern).findall(judgment.upper())
        matches = [m for m in matches if m != ""]
        if len(set(matches)) > 0:
            return TABLE.get(matches[-1].strip("\n"))
    return None


def test_arena_hard_agrees_with_v01_on_generated_outputs():
    parser = PARSERS.get("arena-hard@1")
    disagree = [t for t in TEXTS if parser(t) != released_v01(t)]
    assert not disagree, disagree[:5]
    assert {parser(t) for t in TEXTS} == {None, 0, 1, 2, 3, 4}


def test_arena_hard_last_agrees_with_v2_on_generated_outputs():
    parser = PARSERS.get("arena-hard-last@1")
    disagree = [t for t in TEXTS if parser(t) != released_v2(t)]
    assert not disagree, disagree[:5]
    assert {parser(t) for t in TEXTS} == {None, 0, 1, 2, 3, 4}
    # the two versions really differ on these outputs
    assert any(released_v01(t) != released_v2(t) for t in TEXTS)


def test_label_set_is_the_ordered_scale_of_five_verdicts():
    for name in ("arena-hard@1", "arena-hard-last@1"):
        parser = PARSERS.get(name)
        assert parser.label_set == LabelSet.named_ordinal("B>>A", "B>A", "A=B", "A>B", "A>>B")
        assert parser.label_set.is_ordinal and parser.labels == (0, 1, 2, 3, 4)
        assert [parser.label_set.show(parser(f"[[{v}]]")) for v in ("A<<B", "A<B", "B=A", "B<A", "B<<A")] == [
            "B>>A", "B>A", "A=B", "A>B", "A>>B"]
        # gold as text: the five names, or a whole grade; the other five spellings are not gold names
        assert [parser.label_set.code(g) for g in ("B>>A", "A>>B", 3, "A<B")] == [0, 4, 3, None]
