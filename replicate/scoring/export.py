"""An archive as the official IFBench verifier's input: one prompt/response JSONL file per trial index.

The verifier (allenai/IFBench ``run_eval.py --input_response_data``) reads
lines ``{"prompt": ..., "response": ...}``; it pairs responses with prompts by
prompt text, so one file can hold only one response per prompt and model. The
export writes ``trial-T.jsonl`` per trial index T (and per model when the
archive holds several: ``MODEL/trial-T.jsonl``), over the items scored with an
``ifbench@N`` scorer. Trials without a response (API errors, empty replies)
are left out and counted.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replicate.errors import BadInput
from replicate.output import Format, FormatArg, table


@dataclass(frozen=True, slots=True)
class ExportReport:
    out: str
    files: dict[str, int]  # relative path -> lines
    left_out: dict[str, int]  # reason -> trials

    def to_json(self) -> dict[str, Any]:
        return {"out": self.out, "files": self.files, "left_out": self.left_out}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name) or "_"


def export_ifbench(archive: str | Path, items_path: str | Path, out: str | Path) -> ExportReport:
    """Write the verifier's input files for every ifbench item of ``archive`` into ``out``."""
    from replicate.collect.archive import read_archive
    from replicate.collect.config import load_items

    items = {it.id: it for it in load_items(items_path) if it.scorer.startswith("ifbench@")}
    if not items:
        raise BadInput("no item is scored with an ifbench@N scorer", path=items_path)
    contents = read_archive(archive)
    by_file: dict[tuple[str, int], list[bytes]] = defaultdict(list)
    left: Counter[str] = Counter()
    for _, r in contents.records:
        item = items.get(str(r["item"]))
        if item is None:
            left["not an ifbench item"] += 1
            continue
        text = r.get("text")
        if r.get("error_kind") or not isinstance(text, str) or not text.strip():
            left["no response (api_error or empty)"] += 1
            continue
        by_file[(str(r["model"]), int(r["trial"]))].append(
            orjson.dumps({"prompt": item.prompt_text, "response": text}) + b"\n")
    models = sorted({m for m, _ in by_file})
    out = Path(out)
    files: dict[str, int] = {}
    for (model, trial), lines in sorted(by_file.items()):
        rel = Path(f"trial-{trial}.jsonl") if len(models) == 1 else Path(_safe(model)) / f"trial-{trial}.jsonl"
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.tmp{os.getpid()}")
        tmp.write_bytes(b"".join(lines))
        os.replace(tmp, dest)
        files[str(rel)] = len(lines)
    return ExportReport(str(out), files, dict(left))


def render_export(rep: ExportReport, fmt: FormatArg) -> str:
    """The files written and their line counts, then what was left out (table or markdown)."""
    lines = [table([[f, n] for f, n in rep.files.items()], ["file", "lines"], Format(fmt)).rstrip("\n")]
    lines += [f"left out: {n} ({reason})" for reason, n in sorted(rep.left_out.items())]
    return "\n".join(lines) + "\n"

