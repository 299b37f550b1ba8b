"""How each lm-eval version laid out a samples file, and which filter each line of an unnamed one is.

lm-evaluation-harness logs, for every task, one sample per (document,
filter): its evaluator loops over the task's filters (in the order of
``filter_list``, lm-eval's one default filter ``none`` when there is none)
and, inside, over the documents of its process (rank), so a process logs
every document under its first filter, then under its second, and so on; with
several processes the ranks' lists are joined. Until lm-eval 0.4.7 (its
PR #2517, 2024-11-28) the line did not say which filter it was; it does
since (``filter``, ``metrics``). The layouts, by writer:

- 0.4.0 - 0.4.2: ``<model_args>_<task>.jsonl`` beside ``results.json``,
  holding one JSON array indented by two spaces (despite its name);
- main, May 2024: ``samples_<task>_<date>.json``, first that array, then
  (from 2024-05-31) one JSON object a line;
- 0.4.3 - 0.4.6: ``samples_<task>_<date>.jsonl``, one object a line,
  ``arguments`` as ``{"gen_args_0": {"arg_0": ...}}`` and ``doc_hash``,
  ``prompt_hash``, ``target_hash`` added;
- 0.4.7 on: the same with ``filter`` and ``metrics``.

The rule for a file without ``filter`` (:func:`positions`): the k-th line of a
document is the k-th filter. It holds for one process and for several (each
document belongs to one process, whose lines keep the filter order), and it
asks only that every document be logged the same number of times.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

from replicate.reading.contract import Source

#: The fields lm-eval writes in a sample line that are not per-sample metrics.
NOT_METRICS = frozenset(
    ("doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
     "doc_hash", "prompt_hash", "target_hash")
)
#: What lm-eval's regex filters give when no answer is found (their ``fallback`` default).
INVALID = "[invalid]"
#: The fields the lines of one document share whatever the filter (only ``filtered_resps`` and the metrics differ).
_SHARED = ("resps", "doc_hash", "prompt_hash")
_WS = " \t\r\n"


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def array_objects(src: Source, item: str = "sample", fields: tuple[str, ...] = ()) -> list[tuple[int, dict]]:
    """(line where it starts, object) for every element of a file holding one JSON array (of samples, or of the
    ``item`` its errors name). A key of ``fields`` (those the reader takes) written twice in one element is
    refused or warned as a JSON-lines reader's (:func:`~replicate.reading.jsonl.check_repeated_fields`)."""
    from replicate.reading.jsonl import check_repeated_fields

    patterns = [json.dumps(n, ensure_ascii=False) for n in fields]  # as the text holds it, not \u-escaped
    data = src.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise src.bad("not valid UTF-8", data.count(b"\n", 0, exc.start) + 1) from None
    dec = json.JSONDecoder()
    out: list[tuple[int, dict]] = []
    i = _skip(text, 0) + 1  # the '[' the caller saw
    line, at = 1, 0
    while True:
        i = _skip(text, i)
        line += text.count("\n", at, i)
        at = i
        if i >= len(text):
            raise src.bad(f"the JSON array of {item}s ends before its closing ']' (a file cut short?)", line)
        if text[i] == "]" and not out:
            break
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise src.bad(f"not JSON ({exc.msg}) in the array of {item}s", exc.lineno) from None
        except RecursionError:
            raise src.bad(f"a {item} in the array is nested deeper than Python's JSON parser reads "
                          f"(about {sys.getrecursionlimit()} levels)", line) from None
        if not isinstance(obj, dict):
            raise src.bad(f"expected a JSON object (one logged {item}) in the array, got {type(obj).__name__}", line)
        if any(text.count(p, i, end) > 1 for p in patterns):  # maybe a key twice: look closer
            check_repeated_fields(text[i:end].encode(), fields, src.path, line, src.diagnostics)
        out.append((line, obj))
        i = _skip(text, end)
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "]":
            break
        raise src.bad(f"expected ',' or ']' after a {item} in the JSON array (a file cut short?)",
                      line + text.count("\n", at, i))
    rest = _skip(text, i + 1)
    if rest < len(text):
        raise src.bad(f"text after the JSON array of {item}s", text.count("\n", 0, rest) + 1)
    return out


def positions(samples: list[tuple[int, dict]], src: Source) -> tuple[list[int], int]:
    """Each sample's filter position (0-based: its document's k-th line) and the number of filters.

    Refused, naming the line: documents logged a differing number of times
    (no rule tells their filters apart), and two lines of one document that
    differ in what every filter shares (``resps``, the hashes): the file mixes
    runs.
    """
    seen: dict[str, list[int]] = {}
    out: list[int] = []
    for idx, (_, obj) in enumerate(samples):
        doc = str(obj["doc_id"])
        lines = seen.setdefault(doc, [])
        if lines:
            first_line, first = samples[lines[0]]
            for name in _SHARED:
                if obj.get(name) != first.get(name):
                    raise src.bad(
                        f"doc_id {doc} is logged again with other {name!r} than at line {first_line}: the lines of "
                        "one document differ only by filter, so this file mixes runs (lm-eval appends to an "
                        "existing samples file)",
                        samples[idx][0],
                    )
        out.append(len(lines))
        lines.append(idx)
    counts = Counter(len(v) for v in seen.values())
    if len(counts) > 1:
        (few, _), (many, _) = sorted(counts.items())[:2]
        doc_few = next(d for d, v in seen.items() if len(v) == few)
        doc_many = next(d for d, v in seen.items() if len(v) == many)
        raise src.bad(
            f"documents are logged a differing number of times (doc_id {doc_few}: {few}, doc_id {doc_many}: "
            f"{many}); lm-eval before 0.4.7 logs each document once per filter without naming it, so the "
            "lines cannot be told apart: the file is cut or mixes runs",
            samples[seen[doc_many][-1]][0],
        )
    return out, next(iter(counts)) if counts else 1


def metric_names(obj: dict) -> list[str]:
    """The per-sample metrics of a line without ``metrics``: its fields that are not lm-eval's own."""
    return [k for k in obj if k not in NOT_METRICS]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def no_answer(filtered: Any, fallbacks: set[str]) -> bool:
    """Whether a sample's ``filtered_resps`` are all a filter's fallback: the filter found no answer."""
    leaves = _leaves(filtered)
    return bool(leaves) and all(type(x) is str and x in fallbacks for x in leaves)
