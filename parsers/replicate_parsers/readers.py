"""Built-in readers, shipped through the ``replicate.readers`` entry point ``builtin``.

``judge-jsonl@1``
    flat JSONL judge files: one object per item with key, gold and raw-output
    fields (``--key-field``, ``--gold-field``, ``--output-field``);
``exam@1``
    grouped EXAM files: ``[query_id, [paragraph, ...]]`` per line, each
    paragraph's label decided by its exam grades;
``trec-qrels@1``, ``umbrela-judge@1``
    TREC qrels and UMBRELA judge output;
``lm-eval-samples@1``
    lm-evaluation-harness ``--log_samples`` files as correctness verdicts
    (in :mod:`replicate_parsers.lm_eval`);
``inspect-log@1``
    inspect_ai eval logs (``.eval``, ``.json``) as correctness verdicts
    (in :mod:`replicate_parsers.inspect_log`);
``gold-jsonl@1``
    JSONL of gold labels only, for ``--gold FILE``
    (in :mod:`replicate_parsers.gold_jsonl`);
``helm-run@1``
    HELM run output (a run directory, ``per_instance_stats.json``,
    ``display_predictions.json``) as correctness verdicts (in :mod:`replicate_parsers.helm_run`);
``helm-completions@1``
    a HELM run's ``scenario_state.json``: raw completions for a parser, gold from the
    correct reference (in :mod:`replicate_parsers.helm_completions`);
``responses@1``
    released prompt/response JSONL to score with ``replicate score``
    (in :mod:`replicate_parsers.responses`);
``lighteval-details@1``
    lighteval ``--save-details`` Parquet files, flat or nested layout, as correctness
    verdicts (in :mod:`replicate_parsers.lighteval`);
``lm-eval-samples-parquet@1``
    lm-evaluation-harness samples stored as Parquet (in :mod:`replicate_parsers.lm_eval_parquet`).

For the judge files, qrels, UMBRELA and gold JSONL the loader has bulk paths
(:mod:`replicate.judge.load.fast`) that give the same items as these ``records``
functions, faster; the readers themselves use only the public toolkit
(:mod:`replicate.reading.stream`, :mod:`replicate.reading.jsonl`), as a third party's would. docs/readers.md describes every format.
"""

from __future__ import annotations

import inspect
from typing import Iterator

from replicate.labels import RELEVANCE_0_3
from replicate.reading.contract import Match, Reader, ReadOptions, Record, Source, first_line
from replicate.reading.jsonl import FieldSpec, checked_record, json_objects, json_values, record_fields
from replicate.reading.stream import KEY_SEP, describe, first_json
from replicate_parsers.exam import exam_items
from replicate_parsers.gold_jsonl import GOLD_JSONL
from replicate_parsers.helm_completions import HELM_COMPLETIONS
from replicate_parsers.helm_run import HELM_RUN
from replicate_parsers.inspect_log import INSPECT_LOG
from replicate_parsers.lighteval import LIGHTEVAL_DETAILS
from replicate_parsers.lm_eval import LM_EVAL_SAMPLES
from replicate_parsers.lm_eval_parquet import LM_EVAL_SAMPLES_PARQUET
from replicate_parsers.responses import RESPONSES


def _fields(options: ReadOptions) -> FieldSpec:
    return options.fields if options.fields is not None else FieldSpec()


# judge-jsonl@1 --------------------------------------------------------------------
def _sniff_jsonl(head: bytes, options: ReadOptions) -> Match:
    opens, obj = first_json(head, b"{")
    if not opens:
        return "no"
    fields = _fields(options)
    if isinstance(obj, dict) and fields.gold_field in obj and any(o in obj for o in fields.output_fields):
        return "yes"
    return "maybe"


def _jsonl_records(src: Source) -> Iterator[Record]:
    """One JSON object per line (``.jsonl`` or ``.jsonl.gz``), e.g.
    ``{"query_id": "19335", "corpus_id": "1082489", "original_qrel_score": 0.0,
    "model_output": "##final score: 1"}``.

    Key: the key fields (default query_id and corpus_id; strings or integers,
    compared as strings). Gold: the gold field (default original_qrel_score; a
    whole number, 2.0 reads as 2). Raw output: the first of the output fields
    (default model_output, then gemini_output) present in the file's first
    record; null is read as unparsed. Thought fields and original_output
    (a retry script's rewrite) are counted. Refused: a line that is not a
    JSON object, a missing key/gold/output field, a fractional or negative
    gold, a duplicate key with other content, a torn last line."""
    fields = _fields(src.options)
    out_field: str | None = None
    for lineno, obj in json_values(src, record_fields(fields)):
        key, gold, output, out_field = checked_record(obj, fields, out_field, src.path, lineno, src.options.gold_labels)
        if output is None:
            src.warn("null-output", f"output field {out_field!r} is null (read as unparsed)", lineno)
        yield Record(tuple(key.split(KEY_SEP)), lineno, output=output, gold=gold)


JUDGE_JSONL = Reader(
    "judge-jsonl@1",
    "Flat JSONL judge files: key, gold grade and raw output fields per line.",
    _sniff_jsonl,
    _jsonl_records,
    yields="outputs",
    format="jsonl",
    details=inspect.cleandoc(_jsonl_records.__doc__ or ""),
    options=(),
    streams=True,
)


# exam@1 ---------------------------------------------------------------------------
def _sniff_exam(head: bytes, options: ReadOptions) -> Match:
    opens, value = first_json(head, b"[")
    if not opens:
        return "no"
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], list):
        return "yes"
    return "maybe"


def _exam_records(src: Source) -> Iterator[Record]:
    """Grouped EXAM files (``.jsonl.gz``): each line ``[query_id, [paragraph, ...]]``;
    each paragraph is one item keyed by (query id, paragraph_id). Gold:
    paragraph_data.judgments[0].relevance. Label: decided by the paragraph's
    first exam_grades entry, round(3 x covered / total) with ties to even
    (covered = correctAnswered, or self_ratings >= 4); no graded question
    reads as unparsed. No parser is needed: the pseudo-parser is exam-grades."""
    for lineno, qid, pid, gold, label in exam_items(src):
        yield Record((qid, pid), lineno, label=label if label >= 0 else None, gold=gold)


EXAM = Reader(
    "exam@1",
    "Grouped EXAM files: [query_id, [paragraph, ...]] per line, labels decided by exam grades.",
    _sniff_exam,
    _exam_records,
    yields="labels",
    label_set=RELEVANCE_0_3,
    key_names=("query_id", "paragraph_id"),
    decided="exam-grades",
    format="exam",
    details=inspect.cleandoc(_exam_records.__doc__ or ""),
    options=(),
    streams=True,
)

READERS = [JUDGE_JSONL, EXAM]


# trec-qrels@1 ---------------------------------------------------------------------
def _qrels_tokens(line: bytes) -> list[bytes]:
    return line.split()


def _is_int(token: bytes) -> bool:
    t = token[1:] if token[:1] in (b"-", b"+") else token
    return t.isdigit()


def _sniff_qrels(head: bytes, options: ReadOptions) -> Match:
    line = first_line(head)
    if line is None or line[:1] in (b"{", b"["):
        return "no"
    tokens = _qrels_tokens(line)
    if len(tokens) == 4 and (tokens[1] == b"Q0" or _is_int(tokens[1])) and _is_int(tokens[3]):
        return "yes"
    return "maybe" if 3 <= len(tokens) <= 5 else "no"


def _qrels_records(src: Source) -> Iterator[Record]:
    """TREC qrels: one judgment a line, ``qid iter docid grade``, whitespace
    separated (``q49 0 p3659 2``), as trec_eval reads them. The second column
    (``0`` or ``Q0``, the unused iteration field) is ignored.

    Key: (qid, docid), compared as strings. Label: the grade, a whole number,
    decided in the file (no parser needed; shown as parser ``qrels-grades``).
    Grades outside the declared 0-3 scale are kept as read and warned
    (``label-outside-set``): they count as wrong against any 0-3 gold and the
    matrix flags them. Used as ``--gold``, the grade is the gold label.
    Refused, naming file and line: a line with other than four columns, a
    grade that is not a whole number, a negative grade (replicate keeps grades
    >= 0), a (qid, docid) given twice with different grades, a last line cut
    short (no newline and fewer than four columns), bytes that are not UTF-8.
    Blank lines are skipped with a warning; ``\\r\\n`` line ends read like ``\\n``."""
    torn = src.torn
    n_lines = src.data.count(b"\n") + (1 if torn else 0)
    for lineno, line in src.lines():
        tokens = line.split()
        if not tokens:
            src.skip("blank-line", "blank line (skipped)", lineno)
            continue
        if len(tokens) != 4:
            if torn and lineno == n_lines and len(tokens) < 4:
                raise src.bad("torn last line: the file ends in the middle of a judgment (truncated file?)", lineno)
            raise src.bad(
                f"expected 4 whitespace-separated columns 'qid iter docid grade' (e.g. 'q49 0 p3659 2'), "
                f"got {len(tokens)}: {line[:60].decode('utf-8', 'replace')!r}",
                lineno,
            )
        try:
            qid, _, docid, grade = (t.decode("utf-8") for t in tokens)
        except UnicodeDecodeError:
            raise src.bad("not valid UTF-8", lineno) from None
        if not _is_int(tokens[3]):
            raise src.bad(f"grade {grade[:40]!r} is not a whole number", lineno)
        if len(tokens[3].lstrip(b"+-0")) > 3:  # int() of thousands of digits is refused by Python itself
            raise src.bad(f"grade {grade[:20]}... ({len(grade)} characters) is too large (at most 127)", lineno)
        value = int(grade)
        if value < 0:
            raise src.bad(f"grade {value} is negative: replicate reads grades >= 0 (-1 marks unparsed)", lineno)
        if value > 127:
            raise src.bad(f"grade {value} is too large (at most 127)", lineno)
        yield Record((qid, docid), lineno, label=value)


TREC_QRELS = Reader(
    "trec-qrels@1",
    "TREC qrels 'qid iter docid grade' per line: grades already decided (an LLM judge's qrels, or gold).",
    _sniff_qrels,
    _qrels_records,
    yields="labels",
    label_set=RELEVANCE_0_3,
    key_names=("query_id", "doc_id"),
    has_gold=False,
    decided="qrels-grades",
    format="qrels",
    details=inspect.cleandoc(_qrels_records.__doc__ or ""),
    options=(),
)

READERS.append(TREC_QRELS)


# umbrela-judge@1 ------------------------------------------------------------------
_UMBRELA_IDS = ("qid", "docid")


def _sniff_umbrela(head: bytes, options: ReadOptions) -> Match:
    _, obj = first_json(head, b"{")
    if isinstance(obj, dict) and "prediction" in obj and "query" in obj and "passage" in obj:
        return "yes"
    return "no"


def _umbrela_text(obj: dict, name: str, src: Source, lineno: int) -> str:
    value = obj.get(name)
    if type(value) is str:
        return value
    if type(value) is int and name in _UMBRELA_IDS:
        return str(value)
    if name not in obj:
        raise src.bad(f"record lacks {name!r}", lineno)
    raise src.bad(f"{name!r} must be a string, got {describe(value)}", lineno)


def _umbrela_records(src: Source) -> Iterator[Record]:
    """UMBRELA judge output (castorini/umbrela): one JSON object per
    query-passage pair, as its judge writes them: ``model``, ``query``,
    ``passage``, ``prompt``, ``prediction`` (the raw LLM response),
    ``judgment`` (the tool's own 0-3 reading) and, in newer versions,
    ``result_status`` and ``reasoning``.

    Key: ``qid`` and ``docid`` when the file's first record has both (strings
    or integers; then every record must), else the (query, passage) texts.
    Raw output: ``prediction``, read by ``--parser`` (null reads as
    unparsed). The tool's own ``judgment`` is not taken as the label (its
    parse falls back to 0 when it finds no grade; name a parser instead), and
    the records carry no gold: give it with ``--gold`` (qrels join by
    qid/docid, so ids are needed for them). Other fields are ignored. Refused,
    naming file and line: a line that is not a JSON object, a missing
    query/passage/prediction (or id, once the first record has ids), a
    prediction that is not text, a torn last line."""
    by_ids: bool | None = None
    for lineno, obj in json_objects(src, fields=(*_UMBRELA_IDS, "query", "passage", "prediction")):
        if by_ids is None:
            by_ids = all(k in obj for k in _UMBRELA_IDS)
        names = _UMBRELA_IDS if by_ids else ("query", "passage")
        key = tuple(_umbrela_text(obj, n, src, lineno) for n in names)
        if "prediction" not in obj:
            raise src.bad("record lacks 'prediction' (the raw judge output)", lineno)
        output = obj["prediction"]
        if output is None:
            src.warn("null-output", "'prediction' is null (read as unparsed)", lineno)
        elif type(output) is not str:
            raise src.bad(f"'prediction' must be a string, got {describe(output)}", lineno)
        yield Record(key, lineno, output=output)


UMBRELA_JUDGE = Reader(
    "umbrela-judge@1",
    "UMBRELA judge output JSONL: query, passage, raw prediction (parsed by --parser), the tool's judgment.",
    _sniff_umbrela,
    _umbrela_records,
    yields="outputs",
    key_names=("qid", "docid"),
    has_gold=False,
    format="umbrela",
    details=inspect.cleandoc(_umbrela_records.__doc__ or ""),
    options=(),
    streams=True,
    parsers=("umbrela-fallback@1", "umbrela-strict@1", "umbrela-checked@1"),
)

READERS.append(UMBRELA_JUDGE)


# lm-eval-samples@1 (its own module) ------------------------------------------------
READERS.append(LM_EVAL_SAMPLES)
READERS.append(INSPECT_LOG)
READERS.append(GOLD_JSONL)
READERS.append(HELM_RUN)
READERS.append(HELM_COMPLETIONS)
READERS.append(RESPONSES)
READERS.append(LIGHTEVAL_DETAILS)
READERS.append(LM_EVAL_SAMPLES_PARQUET)
