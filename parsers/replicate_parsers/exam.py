"""``exam@1``: grouped EXAM files -> items whose labels come from exam grades (read with the reader toolkit)."""

from __future__ import annotations

from typing import Any, Iterator

from replicate.errors import BadInput
from replicate.labels import GOLD_MAX
from replicate.parsing import UNPARSED
from replicate.reading.contract import Source
from replicate.reading.jsonl import gold_int, json_values
from replicate.reading.stream import describe, key_text

__all__ = ["exam_label", "exam_items"]


def exam_label(covered: int, total: int) -> int | None:
    """round(3 x covered / total) exactly as Python's ``round`` does it (ties to even).

    The released EXAM analysis computed ``round(3 * covered / total)`` in
    Python, so a tie goes to the even grade: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2. Done
    in integer arithmetic so no float error can move a tie. None when total is 0.
    """
    if total <= 0:
        return None
    q, r = divmod(3 * covered, total)
    twice = 2 * r
    if twice > total or (twice == total and q % 2 == 1):
        q += 1
    return q


def _exam_covered(grade: Any) -> tuple[int, int] | None:
    """(covered, total) from one ``exam_grades`` entry; None if it has neither form."""
    if not isinstance(grade, dict):
        return None
    right, wrong = grade.get("correctAnswered"), grade.get("wrongAnswered")
    if isinstance(right, list) or isinstance(wrong, list):
        right = right if isinstance(right, list) else []
        wrong = wrong if isinstance(wrong, list) else []
        return len(right), len(right) + len(wrong)
    ratings = grade.get("self_ratings")
    if isinstance(ratings, list):
        values: list[int | float] = []
        for r in ratings:
            v = r.get("self_rating") if isinstance(r, dict) else r
            if not isinstance(v, (int, float)) or type(v) not in (int, float):
                return None
            values.append(v)
        return sum(1 for v in values if v >= 4), len(values)
    return None


def exam_items(src: Source) -> Iterator[tuple[int, str, str, int, int]]:
    """``(line, query id, paragraph id, gold, label)`` of every paragraph of a grouped EXAM file."""
    for lineno, value in json_values(src):
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], list)):
            raise src.bad(f"expected an EXAM line [query_id, [paragraph, ...]], got {describe(value)}", lineno)
        qid = key_text(value[0])
        if qid is None:
            raise src.bad(f"query id must be a string or an integer, got {describe(value[0])}", lineno)
        for pos, para in enumerate(value[1], 1):
            pid, gold, label = _paragraph(src, lineno, qid, pos, para)
            yield lineno, qid, pid, gold, label


def _paragraph(src: Source, lineno: int, qid: str, pos: int, para: Any) -> tuple[str, int, int]:
    f, diag = src, src.diagnostics
    where = f"paragraph {pos}"
    pid = key_text(para.get("paragraph_id")) if isinstance(para, dict) else None
    if pid is None:
        raise BadInput(f"{where}: expected an object with a 'paragraph_id'", path=f.path, line=lineno)
    where = f"paragraph {pid!r}"
    try:
        judgment = para["paragraph_data"]["judgments"][0]
        rel = judgment["relevance"]
    except (KeyError, IndexError, TypeError):
        raise BadInput(
            f"{where}: lacks paragraph_data.judgments[0].relevance", path=f.path, line=lineno
        ) from None
    judged = key_text(judgment.get("query"))
    if judged is not None and judged != qid:
        diag.warn(
            "exam-query-mismatch",
            f"{where}: judgments[0].query is {judged!r} but the line's query id is {qid!r} (the line's is used)",
            path=f.path,
            line=lineno,
        )
    gold = gold_int(rel)
    if gold is None:
        raise BadInput(f"{where}: relevance must be a non-negative integer grade (at most {GOLD_MAX}), got {describe(rel)}", path=f.path, line=lineno)
    grades = para.get("exam_grades")
    if not isinstance(grades, list) or not grades:
        raise BadInput(f"{where}: lacks exam_grades[0]", path=f.path, line=lineno)
    cov = _exam_covered(grades[0])
    if cov is None:
        raise BadInput(
            f"{where}: exam_grades[0] has neither correctAnswered/wrongAnswered lists nor numeric self_ratings",
            path=f.path,
            line=lineno,
        )
    label = exam_label(*cov)
    if label is None:
        diag.warn("exam-no-questions", f"{where}: no exam questions graded (unparsed)", path=f.path, line=lineno)
        label = UNPARSED
    return pid, gold, label
