"""An archive as the official IFBench verifier's input: one prompt/response JSONL file per trial index.

The verifier (allenai/IFBench ``run_eval.py --input_response_data``) reads
lines ``{"prompt": ..., "response": ...}``; it pairs responses with prompts by
prompt text, so one file can hold only one response per prompt and model. The
export writes ``trial-T.jsonl`` per trial index T (and per model when the
archive holds several: ``MODEL/trial-T.jsonl``), over the items scored with an
``ifbench@N`` scorer. Trials without a response (API errors, empty replies)
are left out and counted. A model's folder is its id percent-encoded
(:func:`folder_name`: ``openai/gpt-4o`` is ``openai%2Fgpt-4o``), so two models
never share one.
"""

from __future__ import annotations

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


def folder_name(model: str) -> str:
    """A model id as one folder name, injectively: percent-encoding (UTF-8) of every character but ASCII letters,
    digits and ``-_.~@``, ``%`` included, so ``a/b`` is ``a%2Fb`` and ``a_b`` stays ``a_b``; a leading ``.`` is
    encoded too (no ``.``, ``..`` or hidden folder), and the empty id is ``%``."""
    from urllib.parse import quote

    name = quote(model, safe="-_.~@")
    if name.startswith("."):
        name = "%2E" + name[1:]
    return name or "%"


def _folders(models: list[str]) -> dict[str, str]:
    """Model -> its folder; two names equal but for case (one folder on a case-insensitive disk) are refused."""
    folders = {m: folder_name(m) for m in models}
    seen: dict[str, str] = {}
    for m, f in folders.items():
        other = seen.setdefault(f.casefold(), m)
        if other != m:
            raise BadInput(f"models {other!r} and {m!r} would share the folder {f!r} on a case-insensitive "
                           "file system; export them one at a time from archives of their own")
    return folders


def export_ifbench(archive: str | Path, items_path: str | Path, out: str | Path, *, force: bool = False) -> ExportReport:
    """Write the verifier's input files for every ifbench item of ``archive`` into ``out``; a file there is
    replaced only when it is an earlier 'replicate export ifbench' output or with ``force``."""
    from replicate.collect.archive_read import ArchiveStream
    from replicate.collect.config import load_items
    from replicate.outfile import Outputs

    items = {it.id: it for it in load_items(items_path) if it.scorer.startswith("ifbench@")}
    if not items:
        raise BadInput("no item is scored with an ifbench@N scorer", path=items_path)
    stream = ArchiveStream(archive, gzip=True)
    by_file: dict[tuple[str, int], list[bytes]] = defaultdict(list)
    error_reasons: dict[int, str] = {}  # an API error's line -> why left out (a later record may supersede it)
    left: Counter[str] = Counter()
    first: dict[str, int] = {}  # the first line of each reason, which orders them as a whole read did
    for lineno, r in stream.trials():
        item = items.get(str(r["item"]))
        text = r.get("text")
        if item is None:
            reason = "not an ifbench item"
        elif r.get("error_kind") or not isinstance(text, str) or not text.strip():
            reason = "no response (api_error or empty)"
        else:
            by_file[(str(r["model"]), int(r["trial"]))].append(
                orjson.dumps({"prompt": item.prompt_text, "response": text}) + b"\n")
            continue
        if r.get("error_kind"):
            error_reasons[lineno] = reason
        else:
            left[reason] += 1
            first.setdefault(reason, lineno)
    for lineno in stream.superseded_lines:
        del error_reasons[lineno]
    for lineno, reason in error_reasons.items():
        left[reason] += 1
        first[reason] = min(first.get(reason, lineno), lineno)
    left = Counter({reason: left[reason] for reason in sorted(left, key=first.__getitem__)})
    models = sorted({m for m, _ in by_file})
    folders = _folders(models)
    out = Path(out)
    files: dict[str, int] = {}
    targets = {(model, trial): Path(f"trial-{trial}.jsonl") if len(models) == 1
               else Path(folders[model]) / f"trial-{trial}.jsonl" for model, trial in by_file}
    outputs = Outputs("export ifbench", "out", force=force)
    outputs.check_folder(out, [rel.as_posix() for rel in targets.values()])  # all checked before any is written
    for key, lines in sorted(by_file.items()):
        rel = targets[key]
        outputs.write(out / rel, lines, make_folder=True)
        files[str(rel)] = len(lines)
    return ExportReport(str(out), files, dict(left))


def render_export(rep: ExportReport, fmt: FormatArg) -> str:
    """The files written and their line counts, then what was left out (table or markdown)."""
    lines = [table([[f, n] for f, n in rep.files.items()], ["file", "lines"], Format(fmt)).rstrip("\n")]
    lines += [f"left out: {n} ({reason})" for reason, n in sorted(rep.left_out.items())]
    return "\n".join(lines) + "\n"

