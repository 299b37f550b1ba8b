"""Golden tests: every parser version returns the hand-derived label on a frozen table.

The tables live in tests/golden/*.jsonl. The first line of each is a header
object; every other line is one raw output with the label each parser must
return (null = unparsed; a label of a set that names its labels may be given
by name, "A" or "A>B", and is compared as its code). Rows are never edited once released; new shapes and
new parsers add rows or keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate.parsing import PARSERS, UNPARSED

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
FROZEN = "frozen: never edit rows once released; add rows"
BUILTIN_DIST = "replicate-audit"


def _load(path: Path) -> tuple[dict, list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


TABLES = {path.name: _load(path) for path in sorted(GOLDEN.glob("*.jsonl"))}
CASES = [
    pytest.param(name, row["text"], expected, id=f"{row['id']}-{name}")
    for _, rows in TABLES.values()
    for row in rows
    for name, expected in row["expect"].items()
]


@pytest.mark.parametrize(("parser_name", "text", "expected"), CASES)
def test_golden_label(parser_name, text, expected):
    parser = PARSERS.get(parser_name)
    assert parser(text) == _code(parser, expected)


def _code(parser, expected):
    """The code a golden label stands for: an int is itself, a name its code in the parser's set."""
    if not isinstance(expected, str):
        return expected
    code = parser.label_set.code(expected)
    assert code is not None, f"{parser.name}: {expected!r} is no label of {parser.label_set}"
    return code


def test_tables_have_the_frozen_header_and_unique_ids():
    assert TABLES, "no golden tables found"
    for file, (header, rows) in TABLES.items():
        assert header["header"] == FROZEN, file
        ids = [row["id"] for row in rows]
        assert len(ids) == len(set(ids)), f"{file}: duplicate ids"
        for row in rows:
            assert set(row) == {"id", "text", "expect", "note"}, (file, row["id"])


def test_every_row_of_a_table_covers_every_parser_of_that_table():
    for file, (_, rows) in TABLES.items():
        names = set().union(*(row["expect"] for row in rows))
        for row in rows:
            assert set(row["expect"]) == names, f"{file}: row {row['id']} lacks {names - set(row['expect'])}"


def test_every_builtin_parser_has_goldens():
    """A new built-in parser cannot ship without a golden column."""
    covered = {name for _, rows in TABLES.values() for row in rows for name in row["expect"]}
    builtins = [p.name for p in PARSERS if PARSERS.origin(p.name) == BUILTIN_DIST]
    assert builtins, "no built-in parsers registered: is the project installed?"
    missing = sorted(set(builtins) - covered)
    assert not missing, f"built-in parsers without golden rows: {missing}"
    # and enough of them to mean something
    for name in builtins:
        n = sum(name in row["expect"] for _, rows in TABLES.values() for row in rows)
        assert n >= 30, f"{name}: only {n} golden rows"


def test_goldens_name_only_registered_parsers():
    for _, rows in TABLES.values():
        for row in rows:
            for name in row["expect"]:
                assert name in PARSERS, name


def test_issue_shapes_are_all_present():
    """The real output shapes listed in issue 2 stay in the table."""
    _, rows = TABLES["umbrela.jsonl"]
    texts = {row["text"] for row in rows}
    for shape in [
        "##final score: 2",
        "M: 2  \nT: 2  \nO: 2  \n##final score: 2",
        "##M: 1  \n##T: 3  \n##O: 1",
        "1",
        "1: 2",
        "1final score: 0",
        "1 final score: 0",
        "1\n2\n2",
        "**Final score: 2**",
        "Final score: 2.5",
        "##final score: 1\n##final score: 2\n##final score: 1",
        "O: ##final score: 2",
        "",
    ]:
        assert shape in texts, shape
    endings = [t.rsplit("\n", 1)[-1] for t in texts if len(t) > 80]
    for ending in ("Final score: 2", "O: 1", "Answer: 1"):
        assert ending in endings


def test_parse_many_agrees_with_the_goldens():
    for name in ("umbrela-strict@1", "umbrela-fallback@1", "umbrela-checked@1"):
        rows = [row for _, rows in TABLES.values() for row in rows if name in row["expect"]]
        texts = [row["text"] for row in rows] * 2 + [None]  # repeats go through the cache
        got = PARSERS.get(name).parse_many(texts).tolist()
        want = [UNPARSED if row["expect"][name] is None else row["expect"][name] for row in rows] * 2
        assert got == want + [UNPARSED]
