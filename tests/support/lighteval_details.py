"""Parquet files laid out exactly as lighteval's ``--save-details`` writes them (seeded content, ours).

lighteval (``logging/evaluation_tracker.py``) builds each task's details with
``Dataset.from_list([asdict(detail) for detail in task_details])``, drops an
``id`` column, sorts the columns by name and writes ``to_parquet``; the
``Detail`` dataclass (``logging/info_loggers.py``) is flat up to 0.10 and
``doc`` / ``model_response`` / ``metric`` from 0.11. ``datasets`` writes row
groups of 1000 rows (its default batch); pyarrow here does the same.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP = 1000


def flat_detail(i: int, metrics: dict, *, gold: str = "B") -> dict:
    """One row of the flat ``Detail`` (lighteval 0.6-0.10; asdict order)."""
    return {
        "example": f"Question {i}: which is right?", "instruction": "", "full_prompt": f"Q: question {i}\nA:",
        "num_effective_few_shots": 0, "num_asked_few_shots": 0, "predictions": [[-1.25, True], [-0.5, False]],
        "prediction_logits": [], "input_tokens": [], "cont_tokens": [], "truncated": [0, 0], "padded": [0, 0],
        "gold": [gold], "pred_logits": [], "choices": [" A", " B"], "gold_index": [1], "metrics": metrics,
        "specifics": {"note": "x"},
    }


def nested_detail(i: int, metric: dict, *, doc_id: str | None = None) -> dict:
    """One row of the nested ``Detail`` (lighteval 0.11 on): asdict of Doc, ModelResponse and the metric dict."""
    doc = {"query": f"Question {i}: which is right?", "choices": [" A", " B"], "gold_index": 1, "instruction": None,
           "images": None, "specific": None, "unconditioned_query": None, "original_query": None,
           "id": str(i) if doc_id is None else doc_id, "task_name": "lighteval|arc:easy|0", "fewshot_samples": [],
           "sampling_methods": ["LOGPROBS"], "fewshot_sorting_class": None, "generation_size": None,
           "stop_sequences": None, "use_logits": False, "num_samples": 1, "generation_grammar": None}
    response = {"input": f"Q: question {i}\nA:", "input_tokens": [1, 2, 3], "text": [" B"], "output_tokens": [],
                "text_post_processed": None, "reasonings": [], "logprobs": [-1.25, -0.5],
                "argmax_logits_eq_gold": [True], "logits": None, "unconditioned_logprobs": None,
                "truncated_tokens_count": 0, "padded_tokens_count": 0}
    return {"doc": doc, "model_response": response, "metric": metric}


def write_details(path: Path, rows: list[dict], *, as_text: bool = False) -> Path:
    """``rows`` as lighteval writes them: columns sorted by name, no ``id`` column; ``as_text``: every value
    ``str()``-ed, lighteval 0.3-0.5's fallback when the struct conversion failed."""
    if as_text:
        rows = [{k: str(v) for k, v in r.items()} for r in rows]
    table = pa.Table.from_pylist(rows)
    names = sorted(n for n in table.column_names if n != "id")
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.select(names), path, row_group_size=ROW_GROUP)
    return path
