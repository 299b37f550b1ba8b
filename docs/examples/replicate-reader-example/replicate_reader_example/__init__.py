"""An example reader plugin: relevance grades already decided, in a CSV file.

The file has a header naming at least ``query_id``, ``doc_id`` and ``grade``
(any order, other columns ignored), then one judgment a row::

    query_id,doc_id,grade,annotator
    q1,p1,3,llm-a
    q1,p2,0,llm-a

The reader yields decided labels (no parser needed), keyed by (query_id,
doc_id), without gold: compare such files with ``--gold qrels.txt``.
"""

from __future__ import annotations

import csv
import io
from typing import Iterator

from replicate.labels import LabelSet
from replicate.reading.contract import Match, ReadOptions, Record, Source, first_line, reader

NEEDED = ("query_id", "doc_id", "grade")


def sniff(head: bytes, options: ReadOptions) -> Match:
    """'yes' when the first line is a CSV header with the three needed columns."""
    line = first_line(head)
    if line is None:
        return "no"
    columns = [c.strip().lower() for c in line.decode("utf-8", "replace").split(",")]
    if all(c in columns for c in NEEDED):
        return "yes"
    return "no"


@reader(
    "csv-grades@1",
    "CSV with a query_id,doc_id,grade header: relevance grades already decided.",
    sniff=sniff,
    yields="labels",
    label_set=LabelSet.ordinal(0, 3),
    key_names=("query_id", "doc_id"),
    has_gold=False,
    decided="csv-grades",
    format="csv",
)
def read(source: Source) -> Iterator[Record]:
    """A header row naming query_id, doc_id and grade (any order; other
    columns are ignored), then one judgment a row. Key: (query_id, doc_id).
    Label: the grade, a whole number; an empty grade reads as unparsed.
    Refused, naming file and line: a row with fewer cells than the header,
    a grade that is not a whole number, bytes that are not UTF-8."""
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = source.data[: exc.start].count(b"\n") + 1
        raise source.bad("not valid UTF-8", line) from None
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows, None)
    if header is None:
        return
    columns = [c.strip().lower() for c in header]
    missing = [c for c in NEEDED if c not in columns]
    if missing:
        raise source.bad(f"header lacks {', '.join(missing)}", 1)
    at = {name: columns.index(name) for name in NEEDED}
    for row in rows:
        line = rows.line_num
        if not any(cell.strip() for cell in row):
            source.skip("blank-line", "blank row (skipped)", line)
            continue
        if len(row) < len(columns):
            raise source.bad(f"row has {len(row)} cells, the header {len(columns)}", line)
        grade = row[at["grade"]].strip()
        if grade and not grade.isdigit():
            raise source.bad(f"grade {grade!r} is not a whole number", line)
        yield Record((row[at["query_id"]], row[at["doc_id"]]), line, label=int(grade) if grade else None)


from replicate_reader_example.texts import read_texts  # noqa: E402  (built on the reader toolkit)

#: The entry point ``csv_grades = "replicate_reader_example:READERS"`` loads this list.
READERS = [read, read_texts]
