"""Shared rendering helpers."""

from __future__ import annotations


def test_markdown_tables_escape_pipes_once_and_fold_line_breaks():
    from replicate.output import table

    md = table([["q|1 / d2", "already \\| escaped", "two\nlines", 7]], ["key", "b", "c", "n"], "markdown")
    body = md.splitlines()[2]
    assert body.count("|") - body.count("\\|") == 5  # 4 cells: 5 real separators
    assert "q\\|1 / d2" in body and "already \\| escaped" in body and "two lines" in body
    plain = table([["q|1"]], ["key"], "table")
    assert "q|1" in plain and "\\|" not in plain


def test_table_blocks_split_a_wide_table_into_blocks_that_fit():
    from replicate.output import table_blocks

    keys = ["a", "bb"]
    cols = [("one", ["x" * 10, "y"]), ("two", ["z" * 10, "w"]), ("three", ["q" * 10, "r"])]
    # key column 3 wide (the rule under "k" is ---), each data column 10: 3 + 2 + 10 + 2 + 10 = 27
    out = table_blocks("k", keys, cols, width=27)
    blocks = out.split("\n\n")
    assert [b.splitlines()[0].split() for b in blocks] == [["k", "one", "two"], ["k", "three"]]
    assert all(len(line) <= 27 for line in out.splitlines())
    assert [[line.split()[0] for line in b.splitlines()[2:]] for b in blocks] == [keys, keys]
    # wide enough for everything: one table, as table() draws it
    from replicate.output import Format, table

    rows = [[k, *(v[i] for _, v in cols)] for i, k in enumerate(keys)]
    assert table_blocks("k", keys, cols, width=100) == table(rows, ["k", "one", "two", "three"], Format.table)
    # a column wider than the width gets a block of its own
    assert len(table_blocks("k", keys, cols, width=5).split("\n\n")) == 3


def test_prose_wraps_plain_text_at_spaces_and_leaves_markdown_whole():
    from replicate.output import Format, prose

    text = "word " * 30 + "umbrela-fallback@1 " * 3 + "end\n\nsecond paragraph\n"
    plain = prose(text, Format.table, width=40)
    assert all(len(line) <= 40 for line in plain.splitlines())
    assert plain.split() == text.split()  # only line breaks changed
    assert "umbrela-fallback@1" in plain.split() and plain.endswith("\n\nsecond paragraph\n")
    assert prose(text, Format.markdown, width=40) == text
