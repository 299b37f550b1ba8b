"""The official IFBench verifier's per-prompt results, joined to items by prompt text.

The verifier (allenai/IFBench, ``run_eval.py``) writes ``eval_results_strict.jsonl``
and ``eval_results_loose.jsonl``: one row per prompt with ``prompt``,
``response``, ``instruction_id_list``, ``follow_instruction_list`` and
``follow_all_instructions``, but no item id. Its own tooling pairs prompts and
responses by exact prompt text, so we do too: a result row belongs to the item
whose prompt text is identical, and to the trial whose response text is
identical (the verifier is deterministic, so the same response gets the same
verdict under any model or trial). Prompts that match no item, and items with no
result, are reported; under ``ifbench@1`` a prompt that differs only in
surrounding whitespace is pointed out but not joined, under ``ifbench@2`` it is
joined (the official verifier strips prompts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from replicate.command_input import json_lines, read_input
from replicate.errors import BadInput, Message, Param
from replicate.reading.stream import GZIP_MAGIC, InputStream


@dataclass(frozen=True, slots=True)
class IFBenchResults:
    """Verdicts keyed by (prompt, response): strict, and loose when loose files were given."""

    strict: dict[tuple[str, str], bool]
    loose: dict[tuple[str, str], bool] | None
    prompts: frozenset[str]
    sources: tuple[str, ...]
    strict_stripped: dict[tuple[str, str], bool] = field(default_factory=dict)  # keyed by stripped prompt
    loose_stripped: dict[tuple[str, str], bool] | None = None

    def lookup_stripped(self, prompt: str, response: str) -> tuple[bool, bool | None] | None:
        """:meth:`lookup` with prompts compared after stripping surrounding whitespace."""
        exact = self.lookup(prompt, response)
        if exact is not None:
            return exact
        key = (prompt.strip(), response)
        s = self.strict_stripped.get(key)
        if s is None:
            return None
        return s, (None if self.loose_stripped is None else self.loose_stripped.get(key))

    def lookup(self, prompt: str, response: str) -> tuple[bool, bool | None] | None:
        key = (prompt, response)
        s = self.strict.get(key)
        if s is None:
            return None
        return s, (None if self.loose is None else self.loose.get(key))

    def join_report(self, item_prompts: dict[str, str], *, strip: bool = False) -> dict:
        """Prompts matching no item, and items (id -> prompt) with no result row at all.

        ``strip``: prompts that differ only in surrounding whitespace are joined (``ifbench@2``).
        """
        by_prompt = set(item_prompts.values())
        stripped = {p.strip() for p in by_prompt}
        if strip:
            result_stripped = {p.strip() for p in self.prompts}
            unmatched = sorted(p for p in self.prompts if p.strip() not in stripped)
            near: list[str] = []
            no_result = sorted(i for i, p in item_prompts.items() if p.strip() not in result_stripped)
        else:
            unmatched = sorted(p for p in self.prompts if p not in by_prompt)
            near = [p for p in unmatched if p.strip() in stripped]
            no_result = sorted(i for i, p in item_prompts.items() if p not in self.prompts)
        return {
            "result_prompts": len(self.prompts),
            "unmatched_prompts": len(unmatched),
            "unmatched_prompts_whitespace_only": len(near),
            "unmatched_prompt_heads": [p[:60] for p in unmatched[:10]],
            "items_without_result": no_result,
        }


def _read(path: Path) -> dict[tuple[str, str], bool]:
    out: dict[tuple[str, str], bool] = {}
    raw = read_input(path, what="IFBench results file")
    if raw[:2] == GZIP_MAGIC:  # a gzip-compressed results file (.jsonl.gz): inflated, bounded against bombs
        raw = InputStream(path, data=raw).read()
    for lineno, row in json_lines(raw, path=path):
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or not isinstance(
            row.get("response"), str
        ) or not isinstance(row.get("follow_all_instructions"), bool):
            raise BadInput(
                "an IFBench result row needs 'prompt' and 'response' (strings) and "
                "'follow_all_instructions' (true/false)",
                path=path, line=lineno,
            )
        key = (row["prompt"], row["response"])
        if key in out and out[key] != row["follow_all_instructions"]:
            raise BadInput("the same prompt and response appear earlier with the opposite verdict",
                           path=path, line=lineno)
        out[key] = row["follow_all_instructions"]
    return out


def _merge(paths: Iterable[Path]) -> dict[tuple[str, str], bool]:
    merged: dict[tuple[str, str], bool] = {}
    for p in paths:
        for key, v in _read(Path(p)).items():
            if key in merged and merged[key] != v:
                raise BadInput("a prompt and response already judged differently in another results file", path=p)
            merged[key] = v
    return merged


def load_ifbench_results(strict: Sequence[Path], loose: Sequence[Path] = ()) -> IFBenchResults:
    """Read the verifier's strict (required) and loose (optional) result files."""
    if not strict:
        raise BadInput(Message("IFBench loose results were given without the strict ones (", Param("ifbench_strict"), ")"))
    s = _merge(strict)
    lo = _merge(loose) if loose else None
    if lo is not None:
        missing = set(s) - set(lo)
        if missing:
            prompt = next(iter(missing))[0][:60]
            raise BadInput(
                f"{len(missing)} strict result(s) have no loose counterpart (e.g. prompt {prompt!r}); "
                "pass the loose file of the same run", path=loose[0],
            )
    return IFBenchResults(s, lo, frozenset(p for p, _ in s), tuple(str(p) for p in [*strict, *loose]),
                          _stripped(s), None if lo is None else _stripped(lo))


def _stripped(verdicts: dict[tuple[str, str], bool]) -> dict[tuple[str, str], bool]:
    return {(p.strip(), r): v for (p, r), v in verdicts.items()}
