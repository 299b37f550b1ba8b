"""``lm-eval-samples-parquet@1``: lm-evaluation-harness samples stored as Parquet, read as correctness verdicts.

The Hugging Face Hub converts a dataset's JSONL files to Parquet (its
``refs/convert/parquet`` revision), and some releases ship samples that way:
one row per logged sample with the columns of a ``--log_samples`` line
(``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
``filter``, ``metrics``, the hashes and each metric under its own name). The
rows are read exactly as :data:`replicate_parsers.lm_eval.LM_EVAL_SAMPLES`
reads the lines of the JSONL file.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Iterator

from replicate.reading.contract import Match, ReadOptions, Record, Source
from replicate.reading.parquet import parquet_columns, parquet_file, parquet_rows
from replicate_parsers.lm_eval import LM_EVAL_SAMPLES, verdict_records

#: Columns never looked at (the document and the request arguments: the bulk of a row).
_UNREAD = ("doc", "arguments")


def _sniff(head: bytes, options: ReadOptions) -> Match:
    cols = parquet_columns(head)
    if cols is None:
        return "no"
    return "yes" if "doc_id" in cols and "filtered_resps" in cols else "no"


def _records(src: Source) -> Iterator[Record]:
    """lm-evaluation-harness samples as Parquet (the Hub's conversion of a
    ``samples_<task>_<date>.jsonl``, or a release's own): one row per logged
    sample, the columns of a ``--log_samples`` line. Every rule of
    ``lm-eval-samples@1`` applies row for row (rows are its lines): one filter
    (``--filter``), the verdict from a 0/1 metric (``--correct-field``),
    ``[invalid]`` answers read as unparsed and counted, duplicates refused.

    The ``doc`` and ``arguments`` columns are not read; the other columns of
    every row are kept while the file is checked (the filter and metric rules
    look at all rows), so memory grows with the rows, not with the documents'
    text. No results file is looked for beside a Parquet file (the Hub's
    conversion keeps none): the model and task are not named in the provenance.
    Needs pyarrow (the ``parquet`` extra)."""
    pf = parquet_file(src)
    columns = [c for c in pf.schema_arrow.names if c not in _UNREAD]
    rows = list(parquet_rows(src, columns, file=pf))
    yield from verdict_records(rows, src, None)


LM_EVAL_SAMPLES_PARQUET = replace(
    LM_EVAL_SAMPLES,
    name="lm-eval-samples-parquet@1",
    description="lm-evaluation-harness samples stored as Parquet (one row per logged sample): as lm-eval-samples@1 reads its lines.",
    sniff=_sniff,
    records=_records,
    format="lm-eval-samples-parquet",
    details=inspect.cleandoc(_records.__doc__ or ""),
    streams=True,
)
