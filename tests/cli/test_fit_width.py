"""floor, matrix and parsers audit fit their text to the terminal (issue 32 item 13), losing nothing.

At COLUMNS=80 no line of their text passes 80 columns on the bundled example (whose unfitted text
reaches 266-309); every word of the unfitted text is still there (a table split into blocks repeats
its key columns; a wrapped cell keeps its words; run names shown by number have a legend); JSON does
not change. The table fitting is checked on its own against hand-made tables.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.output import fit_lines, fit_table, fitted, table

ROOT = Path(__file__).resolve().parents[2]
P = "umbrela-fallback@1"
RUNS = "fixtures/example/runs.toml"
COMMANDS = {
    "floor": ["floor", "--runs", RUNS, "alpha-2025-01", "alpha-2025-01-repeat", "--edge",
              "alpha-2024-08:alpha-2025-01", "--main", "alpha-2024-08", "-p", P],
    "matrix": ["matrix", "--runs", RUNS, "-p", P],
    "parsers audit": ["parsers", "audit", "-p", "umbrela-strict@1", "-p", P, "--runs", RUNS,
                      "--edge", "alpha-2024-05:alpha-2024-08"],
}
RULE = re.compile(r"^[-=]+$")


def _run(args: list[str], columns: str | None, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    res = CliRunner().invoke(app, ["--no-cache", *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def _words(text: str) -> set[str]:
    return {w for w in text.split() if not RULE.match(w)}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_text_fits_80_columns_and_keeps_every_word(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    wide = _run(COMMANDS[name], "1000", monkeypatch)
    narrow = _run(COMMANDS[name], "80", monkeypatch)
    assert max(map(len, wide.splitlines())) > 200  # the case the issue measured (266 columns)
    assert max(map(len, narrow.splitlines())) <= 80, max(narrow.splitlines(), key=len)
    assert _words(wide) <= _words(narrow), sorted(_words(wide) - _words(narrow))[:10]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_to_a_file_or_pipe_without_columns_text_comes_whole(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No terminal and no COLUMNS (CliRunner's output is not a terminal): nothing to fit, a line per record."""
    assert _run(COMMANDS[name], None, monkeypatch) == _run(COMMANDS[name], "1000", monkeypatch)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_and_markdown_do_not_depend_on_the_width(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for fmt in ("json", "markdown"):
        assert _run([*COMMANDS[name], "-f", fmt], "80", monkeypatch) == _run([*COMMANDS[name], "-f", fmt], "1000", monkeypatch)


def test_floor_names_long_repeats_by_number_with_a_legend(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _run(COMMANDS["floor"], "80", monkeypatch)
    assert "The pairs below name the repeats by number (#)." in text
    legend = {m[2]: m[1] for m in re.finditer(r"^(\d)\s+(alpha-\S+)\s+288", text, re.M)}
    assert legend == {"alpha-2025-01": "1", "alpha-2025-01-repeat": "2"}
    pairs = re.findall(r"^([12])\s+([12])\s+275\s", text, re.M)
    assert sorted(pairs) == [("1", "2"), ("2", "1")]
    assert "The pairs below name" not in _run(COMMANDS["floor"], "1000", monkeypatch)


def test_fit_table_splits_columns_behind_the_key() -> None:
    headers = ["run", *(f"figure {k}" for k in range(8))]
    rows = [[f"run-{r}", *(f"{r}.{k}00%" for k in range(8))] for r in range(3)]
    text = fit_table(rows, headers, 40)
    blocks = text.split("\n\n")
    assert len(blocks) > 1 and all(max(map(len, b.splitlines())) <= 40 for b in blocks)
    for b in blocks:
        assert b.splitlines()[0].startswith("run ") and [ln.split()[0] for ln in b.splitlines()[2:]] == [
            "run-0", "run-1", "run-2"]
    assert _words(text) >= {w for r in rows for w in r} | {"figure", *map(str, range(8))}
    assert fit_table(rows, headers, 1000) == table(rows, headers, "table")  # wide enough: unchanged


def test_fit_table_wraps_a_text_column_at_spaces_and_leaves_what_cannot_break() -> None:
    sentence = "interval low of the range's min to interval high of its max, each taken again"
    text = fit_table([["regression rate", sentence]], ["floor", "value"], 50)
    assert max(map(len, text.splitlines())) <= 50
    assert " ".join(text.split()[6:]) == sentence  # after the header, its rule and the key: the words in order
    word = "x" * 70
    assert word in fit_table([["a", word]], ["k", "v"], 50)  # one word wider than the width stays whole


def test_fitted_context_reaches_table_and_fit_lines_wraps_prose_only() -> None:
    rows = [["a", "b" * 30, "c" * 30]]
    with fitted(40):
        assert max(map(len, table(rows, ["k", "x", "y"], "table").splitlines())) <= 40
        assert table(rows, ["k", "x", "y"], "markdown") == table(rows, ["k", "x", "y"], "markdown")
    assert max(map(len, table(rows, ["k", "x", "y"], "table").splitlines())) > 40  # outside: as before
    tab = table([["1", "2"]], ["a" * 50, "b" * 50], "table")
    prose = "word " * 30
    out = fit_lines(f"{prose.strip()}\n\n{tab}", 40)
    first, second = out.split("\n\n", 1)
    assert max(map(len, first.splitlines())) <= 40 and first.split() == prose.split()
    assert second == tab  # a paragraph holding a table is left to table()


def test_the_reader_line_on_stderr_fits_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stderr line naming the reader chosen by content lists as many files as fit COLUMNS, else the count;
    without COLUMNS (to a pipe) the first three, as before."""
    from replicate.cli.judge_options import _named

    monkeypatch.chdir(ROOT)
    lines = {}
    for columns in ("60", "140", "1000", None):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        res = CliRunner().invoke(app, ["--no-cache", *COMMANDS["matrix"]])
        assert res.exit_code == 0, res.output
        [line] = [x for x in res.stderr.splitlines() if x.startswith("reader: ")]
        lines[columns] = line
    n = lines["1000"].count(".jsonl")  # every file named: it fits
    assert n >= 5 and " more" not in lines["1000"]
    assert lines["60"].endswith(f" for {n} files") and len(lines["60"]) <= 74  # the reader's name is never cut
    assert len(lines["140"]) <= 140 and " and " in lines["140"]
    assert lines[None].count(".jsonl") == 3 and lines[None].endswith(f" and {n - 3} more")
    paths = ["aa", "bbb", "c"]
    # "aa and 2 more" is 13 characters, "aa, bbb and 1 more" 18, all three "aa, bbb, c" 10
    assert [_named(paths, room) for room in (0, 9, 10, 13, 17, 18, None)] == [
        "3 files", "3 files", "aa, bbb, c", "aa, bbb, c", "aa, bbb, c", "aa, bbb, c", "aa, bbb, c"]
    five = ["aaaa", "bbb", "cc", "dddd", "eeeee"]  # all five: 26 characters
    assert [_named(five, room) for room in (14, 15, 20, 25, 26)] == [
        "5 files", "aaaa and 4 more", "aaaa, bbb and 3 more", "aaaa, bbb, cc and 2 more", "aaaa, bbb, cc, dddd, eeeee"]
