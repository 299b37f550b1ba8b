"""Properties of every parser on many generated outputs (seeded), and speed-path equivalence.

- no parser raises; each returns None or an int in its own ``labels``;
- parse_many equals calling the parser one text at a time;
- the fast paths of parsers/umbrela.py (literal pre-checks, the reverse digit
  scan) give exactly what a plain transcription of the rule text gives (the
  straightforward readings of replicate_parsers/umbrela_reference.py, which
  bench/bench_parsers.py times the parsers against);
- the @1 readings trim the text, so surrounding whitespace never matters.
"""

from __future__ import annotations

import random
import re

import pytest

from replicate.parsing import PARSERS, UNPARSED
from replicate_parsers import umbrela, umbrela_reference

# Pieces that exercise every rule, their near misses, and Unicode corners.
TOKENS = [
    "final", "Final", "FINAL", "f\u0131nal", "F\u0130NAL", "score", "Score", "\u017fcore", "final score",
    "Final Score", "overall", "Overall", "for", "this", "passage", "for this passage", "is",
    " ", "  ", "\n", "\r\n", "\r", "\t", "\u00a0", "\u2028", ":", "=", "*", "**", "#", "##", "######", "#######",
    "O", "o", "M", "T", "(O)", "(Final Score)", "( final  score )", "(", ")",
    "0", "1", "2", "3", "4", "9", "10", "02", ".", "2.5", "2.0", "3.", "1.99999999999999999", "-", "/", "_",
    "\u00e9", "\u00b2", "\u0660", "\u0665", "\uff12", "a", "x", "Answer", "relevance", "\U0001f600",
]


def random_outputs(n: int, *, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(0, 16)
        out.append("".join(rng.choice(TOKENS) for _ in range(k)))
    # and some fully random unicode noise
    for _ in range(n // 10):
        out.append("".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 40))))
    return out


TEXTS = random_outputs(4000, seed=20240601)


@pytest.mark.parametrize("name", PARSERS.names())
def test_never_raises_and_stays_in_labels(name):
    parser = PARSERS.get(name)
    allowed = set(parser.labels)
    for text in TEXTS:
        label = parser(text)
        assert label is None or (type(label) is int and label in allowed), (name, text, label)


@pytest.mark.parametrize("name", PARSERS.names())
def test_parse_many_equals_one_at_a_time(name):
    parser = PARSERS.get(name)
    texts = TEXTS[:1500] + TEXTS[:300]  # repeats hit the cache
    one = [UNPARSED if (v := parser(t)) is None else v for t in texts + [None]]
    assert parser.parse_many(texts + [None]).tolist() == one  # held in memory: each distinct text read once
    assert parser.parse_many(iter(texts + [None])).tolist() == one  # a stream: read as it comes
    assert parser.parse_many(tuple(texts + [None])).dtype == parser.parse_many(iter(texts)).dtype


@pytest.mark.parametrize("name", ["umbrela-strict@1", "umbrela-fallback@1"])
def test_fast_paths_agree_with_a_plain_transcription(name):
    naive = umbrela_reference.NAIVE[name]
    parser = PARSERS.get(name)
    disagree = [t for t in TEXTS if parser(t) != naive(t)]
    assert not disagree, disagree[:5]
    # the generator must actually reach every rule, or this test proves little
    assert {parser(t) for t in TEXTS} == {None, 0, 1, 2, 3}


def test_reverse_digit_scan_equals_the_regex():
    rx = re.compile(r"\b([0-3])\b")
    for text in TEXTS + ["2020 1", "a1 2b _3 (0)", "1\u00b2", "x" * 50 + "3" + "y"]:
        found = rx.findall(text)
        assert umbrela._last_standalone_digit(text) == (int(found[-1]) if found else None), text


def test_first_final_is_the_patterns_search():
    """The 'final' rules are tried only where "nal" is in the lowered text: the same match as a search."""
    extra = ["xx final score: 2 final score: 3", "nal final\nscore 1", "FiNaL sCoRe:**3", "f\u0131nal score: 1 \u0130",
             "finalfinal score 0", "fi" + "nal" * 5 + " score: 2"]
    for pattern in (umbrela._FALLBACK_FINAL, umbrela._STRICT_FINAL):
        for text in TEXTS + extra:
            want, got = pattern.search(text), umbrela.first_final(pattern, text, text.lower())
            assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups())), text


@pytest.mark.parametrize("name", ["umbrela-strict@1", "umbrela-fallback@1"])
def test_surrounding_whitespace_never_matters_for_the_released_readings(name):
    parser = PARSERS.get(name)
    for text in TEXTS[:1500]:
        assert parser(" \n\t" + text + "\r\n ") == parser(text), text


def test_hypothesis_texts_never_break_a_parser():
    hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed (seeded tests above cover this)")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=300, derandomize=True, deadline=None)
    @hypothesis.given(st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=3)), max_size=20).map("".join))
    def check(text):
        for parser in PARSERS:
            label = parser(text)
            assert label is None or label in parser.labels
        assert PARSERS.get("umbrela-strict@1")(text) == umbrela_reference.naive_strict(text)
        assert PARSERS.get("umbrela-fallback@1")(text) == umbrela_reference.naive_fallback(text)

    check()


def test_number_reads_every_whole_number_of_its_range_in_each_written_form():
    """number@1: i, 0i, i.0, i.000 and whitespace around them give i for 0-10; outside the range, or
    with a fractional part as written, nothing."""
    number = PARSERS.get("number@1")
    assert number.label_set is not None and (number.label_set.low, number.label_set.high) == (0, 10)
    rng = random.Random(20261202)
    for i in range(0, 200):
        space = "".join(rng.choice(" \t\r\n") for _ in range(rng.randint(0, 3)))
        for written in (str(i), f"0{i}", f"{i}.0", f"{i}.000"):
            assert number(space + written + space) == (i if i <= 10 else None), written
        for frac in (f"{i}.5", f"{i}.01", f"{i}.{rng.randint(1, 9)}", f"{i}.0{rng.randint(1, 9)}"):
            assert number(frac) is None, frac
        assert number(f"-{i}") is None and number(f"{i}e0") is None and number(f"{i} {i}") is None


def test_number_is_unparsed_for_any_text_that_is_not_only_a_number():
    number = PARSERS.get("number@1")
    whole = re.compile(r"[ \t\r\n]*[0-9]+(\.0+)?[ \t\r\n]*")
    for text in TEXTS:
        if whole.fullmatch(text) is None:
            assert number(text) is None, text
