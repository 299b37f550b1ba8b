"""``lighteval-details@1``: lighteval ``--save-details`` Parquet files, read as correctness verdicts.

lighteval writes one ``details_<task>_<date>.parquet`` per task, one row per
document, from ``Dataset.from_list([asdict(detail) ...])`` with the columns
sorted by name (``logging/evaluation_tracker.py``). The row is the
``DetailsLogger.Detail`` dataclass (``logging/info_loggers.py``), in one of two
layouts:

- flat (lighteval up to 0.10, the Open LLM Leaderboard v1 details):
  ``example``, ``instruction``, ``full_prompt``, ``num_effective_few_shots``,
  ``num_asked_few_shots``, ``predictions``, ``prediction_logits`` (0.6 on),
  ``input_tokens``, ``cont_tokens``, ``truncated``, ``padded``, ``gold``,
  ``pred_logits``, ``choices``, ``gold_index``, ``metrics`` (a struct of metric
  name -> value) and ``specifics``; where the struct conversion failed,
  lighteval wrote every value with ``str()`` (``metrics`` is then the text
  ``"{'acc': 1.0}"``);
- nested (lighteval 0.11 on): ``doc`` (the ``Doc``: ``query``, ``choices``,
  ``gold_index``, ``id``, ...), ``model_response`` (the ``ModelResponse``:
  ``text``, ``logprobs``, ...) and ``metric`` (a struct of metric name -> value).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any, Iterator

from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, SourceRule
from replicate.reading.parquet import parquet_columns, parquet_file, parquet_rows
from replicate.reading.stream import describe
from replicate_parsers.lm_eval import chosen_metric, metric_verdict

_NAME = re.compile(r"^details_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)\.parquet$")
_FLAT = ("metrics",)
_FLAT_ANY = ("example", "predictions", "full_prompt", "gold")
_NESTED = ("doc", "model_response", "metric")


def task_of(name: str) -> str | None:
    """The task a details file's name carries (``details_leaderboard|arc:challenge|25_2024-...parquet``)."""
    m = _NAME.match(name)
    return m.group("task") if m else None


def _sniff(head: bytes, options: ReadOptions) -> Match:
    cols = parquet_columns(head)
    if cols is None:
        return "no"
    if all(c in cols for c in _NESTED) or all(c in cols for c in _FLAT) and any(c in cols for c in _FLAT_ANY):
        return "yes"
    return "no"


def _metrics_of(value: Any, src: Source, row: int) -> dict:
    """A row's metrics: a struct, or the ``str()`` of a dict that lighteval wrote when the struct failed."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise src.bad(f"'metrics' is text that is not a dict of metric values: {value[:60]!r}", row) from None
    if not isinstance(value, dict):
        raise src.bad(f"'metrics' must be a struct of metric name -> value, got {describe(value)}", row)
    return value


def _records(src: Source) -> Iterator[Record]:
    """lighteval ``--save-details`` files (``details_<task>_<date>.parquet``), in either layout:
    flat (up to lighteval 0.10 and the Open LLM Leaderboard v1 details: ``example``,
    ``predictions``, ``gold``, ``metrics``, ...) or nested (0.11 on: ``doc``,
    ``model_response``, ``metric``). Only the metric column (and ``doc.id``) is read,
    one batch of rows at a time, so memory does not grow with the file.

    Key: the nested layout's ``doc.id`` (lighteval sets it to the document's position
    in the task, as text); the flat layout keeps no id, so the key is the row's
    position (0-based, the same numbering: lighteval writes one row per document in
    task order). Verdict: the per-sample metric named by ``--correct-field`` (e.g.
    ``acc``, ``em``, ``quasi_exact_match``; needed when the rows carry several):
    1 (or true) right, 0 (or false) wrong, null unscored (warned); anything else
    (0.5, an f1 or BLEU score) is refused, as for lm-eval. The mean of these
    verdicts is lighteval's own aggregate of a 0/1 metric: ``MetricsLogger.aggregate``
    applies the metric's corpus function, ``np.mean`` for these, to the values of
    every logged document, and a metric that cannot match an answer scores it 0
    itself (the details hold the 0). lighteval has no rule for a null metric (its
    mean fails on one); the declared source rule counts it wrong (``--unparsed
    wrong``), so the denominator stays every document as in lighteval's mean. The records carry no gold and need none; the parser is shown as
    ``lighteval-metric`` and each file's provenance keeps the metric used
    (``reader_options``) and the task from the file name (``about``).

    Refused, naming file and row: a ``metrics``/``metric`` value that is not a
    struct (or its ``str()`` form), a row lacking the chosen metric (listing those
    it has), a nested row with an empty ``doc.id``, a file that is not readable
    Parquet. Needs pyarrow (the ``parquet`` extra)."""
    task = task_of(src.path.name)
    if task is not None:
        src.about["task"] = task
    pf = parquet_file(src)
    cols = set(pf.schema_arrow.names)
    nested = all(c in cols for c in _NESTED)
    column = "metric" if nested else "metrics"
    if column not in cols:
        raise src.bad(f"no '{column}' column (lighteval details carry doc, model_response and metric, or "
                      f"example, predictions, gold and metrics); columns: {', '.join(sorted(cols))}")
    metric: str | None = None
    for row, values in parquet_rows(src, ["doc.id", "metric"] if nested else ["metrics"], file=pf):
        metrics = _metrics_of(values[column], src, row)
        if metric is None:
            metric = chosen_metric(sorted(metrics), src, row)
            src.used["correct_field"] = metric
            src.used["layout"] = "nested" if nested else "flat"
        if metric not in metrics:
            raise src.bad(f"row lacks the metric {metric!r} (--correct-field); its metrics: "
                          f"{', '.join(sorted(metrics))}", row)
        if nested:
            doc_id = (values.get("doc") or {}).get("id")
            if doc_id in (None, ""):
                raise src.bad("the row's doc.id is empty (lighteval 0.11 on sets it to the document's position)", row)
            key = str(doc_id)
        else:
            key = str(row - 1)
        yield Record((key,), row, correct=metric_verdict(metrics[metric], metric, src, row))


#: lighteval's aggregate: the mean of a per-document metric over every document it logged.
LIGHTEVAL_RULE = SourceRule("wrong", "lighteval averages a metric over every document it logged (np.mean); its "
                                     "metrics score an answer they cannot match 0, and a null metric has no "
                                     "lighteval aggregate (its mean fails on it): counted wrong, every document "
                                     "in the denominator")

LIGHTEVAL_DETAILS = Reader(
    "lighteval-details@1",
    "lighteval --save-details Parquet files (flat v1 leaderboard layout or nested 0.11+): correctness from a 0/1 metric (--correct-field).",
    _sniff,
    _records,
    yields="verdicts",
    key_names=("doc_id",),
    has_gold=False,
    decided="lighteval-metric",
    format="lighteval-details",
    details=inspect.cleandoc(_records.__doc__ or ""),
    options=("correct_field",),
    streams=True,
    source_rule=LIGHTEVAL_RULE,
)
