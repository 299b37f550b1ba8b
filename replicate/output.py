"""Rendering helpers shared by every command: JSON, plain tables, markdown.

Pure functions from values to text. JSON carries rates as fractions (0-1);
tables and markdown show them as percentages.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Literal, Sequence, TypeAlias

import orjson


class Format(str, enum.Enum):
    """Output format of every figure-computing command."""

    table = "table"
    markdown = "markdown"
    json = "json"


#: A format as the enum or its name (renderers accept either).
FormatArg: TypeAlias = Format | Literal["table", "markdown", "json"]


# Dataclasses pass through to ``_default`` so that their own ``to_json()`` decides
# their shape (orjson would otherwise serialise every field natively).
_JSON_OPTS = (
    orjson.OPT_INDENT_2
    | orjson.OPT_SERIALIZE_NUMPY
    | orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _default(obj: Any) -> Any:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    raise TypeError(f"cannot serialise {type(obj).__name__}")


#: Characters a terminal acts on instead of showing: C0 controls but tab and newline, DEL, C1 controls, and the
#: bidirectional overrides and isolates (which reorder what is shown).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: What JSON text may still hold raw of those (JSON escapes C0 itself).
_JSON_UNPRINTABLE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown escaped (``\\x1b``, ``\\x00``,
    ``\\u202e``): file names and contents echoed to a terminal cannot drive it."""
    return _UNPRINTABLE.sub(_escape, text) if _UNPRINTABLE.search(text) else text


#: :data:`_UNPRINTABLE` and the tab and line breaks too: what must not reach one row of a table raw.
_NOT_ON_A_ROW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escaped(text: str) -> str:
    """``text`` (a file name) on one table row: every control character shown escaped as :func:`printable`
    does, tab and line breaks too (``\\t``, ``\\n``, ``\\r``), so a column's width is that of what is shown."""
    return _NOT_ON_A_ROW.sub(lambda m: _SHORT.get(m.group()) or _escape(m), text)


def printable_json(text: str) -> str:
    """JSON text with DEL, C1 controls and bidi overrides as ``\\u`` escapes: the same JSON, safe to show."""
    if not _JSON_UNPRINTABLE.search(text):
        return text
    return _JSON_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps_json(obj: Any) -> str:
    """Indented JSON text; objects with ``to_json()`` serialise themselves, NaN -> null."""
    return orjson.dumps(obj, default=_default, option=_JSON_OPTS).decode() + "\n"


def pct(x: float | None, digits: int = 2) -> str:
    """A fraction as a percentage string; ``-`` for undefined."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.{digits}f}%"


def num(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def md_cell(value: Any) -> Any:
    """A value made safe for one markdown table cell: ``|`` escaped (once), line breaks folded."""
    if not isinstance(value, str):
        return value
    return _UNESCAPED_PIPE.sub(r"\\|", value.replace("\r\n", " ").replace("\n", " "))


#: Characters that end a line in some renderer (folded into a space), and other control characters (shown as U+FFFD).
_LINE_BREAKS = re.compile("\r\n|[\n\r\t\v\f\x1c-\x1e\x85\u2028\u2029]")
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
#: Markdown punctuation that can start structure (emphasis, links, images, code, HTML, headings, tables,
#: strikethrough), each backslash-escaped, which every CommonMark/GFM renderer shows literally. A ``[`` is
#: escaped only where a ``](`` or ``][`` follows: on one line of a note without link definitions that is
#: the only way it opens a link or image, so ``[12.5, 13.5]`` stays as written. ``>`` opens a quote only
#: at a line's start, where escaped text never is (it is kept on its line, and the note's wrapping never
#: starts a line with it), so ``a -> b`` stays as written too.
_MD_SPECIAL = re.compile(r"[\\`*<#|~]|\[(?=.*\][(\[])|&(?=#?\w+;)|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def one_line(value: Any) -> str:
    """``str(value)`` kept on one line: line breaks folded into a space, other control characters as U+FFFD."""
    return _CONTROLS.sub("\ufffd", _LINE_BREAKS.sub(" ", str(value)))


def md_text(value: Any) -> str:
    """User-supplied text (a claim's id, where and text, a title, a run or file name) made inert in markdown.

    The one escaping function for text a note did not write itself: kept on its line
    (:func:`one_line`), and every character that could open markdown or HTML structure
    (``\\ ` * < # | ~``, ``_`` at a word's edge, ``&`` of an entity, ``[`` of a link) backslash-escaped, so
    a renderer shows it as written and no ``<script>``, link, image, code fence, heading or table
    cell can come out of it. Ordinary text (letters, digits, spaces, ``-``, ``.``, ``:``, ``/``,
    ``@``, ``_`` inside a word) comes out unchanged. Inside a code span use :func:`md_code`.
    """
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(value))


def md_code(value: Any) -> str:
    """User-supplied text as one inline code span: on one line, fenced by more backticks than it holds.

    A code span shows its content literally (no escape works inside it), so the fence is what
    keeps it closed. In a table, :func:`md_cell` escapes its ``|`` (GFM splits cells before it reads
    code spans, and drops that backslash inside them).
    """
    text = one_line(value)
    longest = max((len(r) for r in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], fmt: FormatArg, *, keep: int = 1) -> str:
    """A plain-text (``simple``) or GitHub-markdown (``github``) table.

    In markdown every cell goes through :func:`md_cell`, so a ``|`` in an item
    key, a path or an output cannot split a row. Plain text rendered inside
    :func:`fitted` that is wider than its width comes as blocks of columns, each
    starting with the first ``keep`` columns (what names a row), and a column of
    text too wide even alone is wrapped at spaces (:func:`fit_table`).
    """
    from tabulate import tabulate

    if Format(fmt) is Format.markdown:
        rows = [[md_cell(v) for v in row] for row in rows]
        headers = [md_cell(h) for h in headers]
        style = "github"
    else:
        style = "simple"
        width = _FIT.get()
        if width is not None:
            return fit_table(rows, headers, width, keep=keep)
    return tabulate(rows, headers=headers, tablefmt=style, disable_numparse=True) + "\n"


def _plain(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n"


def _widest(text: str) -> int:
    return max(map(len, text.splitlines()), default=0)


def fit_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], width: int, *, keep: int = 1) -> str:
    """A plain-text table within ``width`` columns where its content allows, nothing left out.

    Too wide, its columns go into blocks (in order, each block as many as fit), every block led by the
    first ``keep`` columns so that rows match across blocks; blocks are separated by a blank line. A
    block still too wide (one long column) has its widest text column wrapped at spaces, never inside a
    word or a hyphenated name; what cannot be broken stays whole.
    """
    text = _plain(rows, headers)
    if _widest(text) <= width or not headers:
        return text
    keep = max(0, min(keep, len(headers) - 1))
    key, blocks, current = list(range(keep)), [], []  # type: ignore[var-annotated]
    for col in range(keep, len(headers)):
        candidate = [*current, col]
        if current and _widest(_plain(*_pick(rows, headers, key + candidate))) > width:
            blocks.append(key + current)
            current = [col]
        else:
            current = candidate
    blocks.append(key + current)
    return "\n".join(_wrap_columns(*_pick(rows, headers, cols), width, keep) for cols in blocks)


def _pick(rows: Sequence[Sequence[Any]], headers: Sequence[str], cols: Sequence[int]) -> tuple[list, list]:
    return [[row[i] for i in cols] for row in rows], [headers[i] for i in cols]


def _fill(value: Any, width: int) -> Any:
    """A text cell wrapped at spaces to ``width`` (each of its lines; words and hyphenated names whole)."""
    if not isinstance(value, str):
        return value
    import textwrap

    return "\n".join(textwrap.fill(p, width, break_long_words=False, break_on_hyphens=False) or p
                     for p in value.split("\n"))


def _wrap_columns(rows: list, headers: list, width: int, keep: int) -> str:
    """The table, its widest wrappable (text with spaces) non-key column narrowed until it fits or cannot."""
    text = _plain(rows, headers)
    while _widest(text) > width:
        widths = {
            i: max(len(line) for v in (headers[i], *(r[i] for r in rows)) for line in str(v).split("\n"))
            for i in range(keep, len(headers))
            if any(isinstance(r[i], str) and " " in r[i] for r in rows)
        }
        if not widths:
            break
        col = max(widths, key=lambda i: widths[i])
        target = max(widths[col] - (_widest(text) - width), 12)
        if target >= widths[col]:
            break

        new_rows = [[_fill(v, target) if i == col else v for i, v in enumerate(r)] for r in rows]
        new = _plain(new_rows, headers)
        if _widest(new) >= _widest(text):
            break
        rows, text = new_rows, new
    return text


#: The width plain text is fitted to while :func:`fitted` is in force (None: tables and prose as they come).
_FIT: ContextVar[int | None] = ContextVar("replicate_fit_width", default=None)


@contextmanager
def fitted(width: int | None) -> Iterator[None]:
    """Within: plain-text tables (:func:`table`) and prose (:func:`prose_width`) fit ``width`` columns."""
    token = _FIT.set(width)
    try:
        yield
    finally:
        _FIT.reset(token)


def fit_width() -> int | None:
    """The width :func:`fitted` is in force with (None: none)."""
    return _FIT.get()


def prose_width(default: int = 100) -> int:
    """The width prose wraps to: ``default`` (100), or the fitted width when that is narrower."""
    width = _FIT.get()
    return default if width is None else min(default, width)


_RULE = re.compile(r"^-+(?:  +-+)+$")
_UNDERLINE = re.compile(r"^(?:=+|-+)$")


def fit_lines(text: str, width: int) -> str:
    """Plain text whose every line fits ``width`` where the content allows: a paragraph (lines between
    blank lines) holding no table rule is wrapped line by line at spaces (never inside a word or a
    hyphenated name; later lines indented two more than the first), a heading's underline cut to its
    width; paragraphs holding a table (fitted by :func:`table`) are left as they are."""
    import textwrap

    out: list[str] = []
    for para in re.split(r"(\n\s*\n)", text):
        lines = para.split("\n")
        if para.strip() == "" or any(_RULE.match(line) for line in lines):
            out.append(para)
            continue
        fitted_lines: list[str] = []
        for line in lines:
            if len(line) <= width:
                fitted_lines.append(line)
            elif _UNDERLINE.match(line):
                fitted_lines.append(line[:width])
            else:
                lead = line[: len(line) - len(line.lstrip())]
                fitted_lines.append(textwrap.fill(line.strip(), width, initial_indent=lead, subsequent_indent=lead + "  ",
                                                  break_long_words=False, break_on_hyphens=False))
        out.append("\n".join(fitted_lines))
    return "".join(out)


#: Plain-text tables wider than this are split into blocks (see :func:`table_blocks`).
TABLE_WIDTH = 100


def table_blocks(
    key_header: str, keys: Sequence[Any], columns: Sequence[tuple[str, Sequence[Any]]], *, width: int = TABLE_WIDTH
) -> str:
    """A plain-text table too wide for a terminal as blocks of columns, each fitting ``width``
    and each starting with the key column, so that rows match across blocks. Columns keep
    their order; a single column wider than ``width`` gets a block of its own."""
    blocks: list[str] = []
    current: list[tuple[str, Sequence[Any]]] = []

    def render(cols: list[tuple[str, Sequence[Any]]]) -> str:
        rows = [[k, *(values[i] for _, values in cols)] for i, k in enumerate(keys)]
        return table(rows, [key_header, *(h for h, _ in cols)], Format.table)

    for col in columns:
        candidate = [*current, col]
        text = render(candidate)
        if current and max(map(len, text.splitlines()), default=0) > width:
            blocks.append(render(current))
            current = [col]
        else:
            current = candidate
    if current or not blocks:
        blocks.append(render(current))
    return "\n".join(blocks)


def prose(text: str, fmt: FormatArg, *, width: int = TABLE_WIDTH) -> str:
    """Explanatory text: in plain text each line wrapped to ``width`` at spaces (never inside
    a hyphenated name); markdown and JSON keep lines whole (a markdown viewer reflows them)."""
    if Format(fmt) is not Format.table:
        return text
    import textwrap

    end = "\n" if text.endswith("\n") else ""
    lines = text[: len(text) - len(end)].split("\n")
    width = prose_width(width)
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) if line else "" for line in lines) + end


#: A word that would open a new markdown block (list item, heading, quote, rule, table) at a line's start.
_BLOCK_START = re.compile(r"[-+*>]|#{1,6}|\d{1,9}[.)]|=+|-+|\|.*|```.*")


def _wrap_line(line: str, width: int) -> list[str]:
    """Greedy wrap at spaces; never starts a continuation line with a word markdown would read as a block."""
    indent = "  " if line.startswith("- ") else ""
    lines: list[list[str]] = [[]]
    used = 0
    for word in line.rstrip().split(" "):
        if lines[-1] and used + 1 + len(word) > width:
            lines.append([])
            used = len(indent)
        lines[-1].append(word)
        used += len(word) + (1 if len(lines[-1]) > 1 else 0)
    for k in range(1, len(lines)):  # pull a word down so that no line opens a block
        while _BLOCK_START.fullmatch(lines[k][0]) and len(lines[k - 1]) > 1:
            lines[k].insert(0, lines[k - 1].pop())
    return [(indent if k else "") + " ".join(words) for k, words in enumerate(lines)]


def wrap_markdown(text: str, width: int) -> str:
    """Markdown that reads as plain text too: paragraphs and list items longer than ``width`` wrapped; tables,
    headings and code blocks stay as they are.

    Lines break only at spaces (file names, parser names and inline code stay
    whole) and never so that a continuation line would start a markdown block,
    so the rendered note is unchanged: markdown joins the lines again.
    """
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or len(line) <= width or line.startswith(("|", "#", "    ")) or "](" in line:
            out.append(line)
        else:
            out.extend(_wrap_line(line, width))
    return "\n".join(out)
