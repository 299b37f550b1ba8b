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
