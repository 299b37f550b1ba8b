"""``replicate draw``: a seeded, stratified sample of an items file, written with its seed and source hash.

A collection's item list (500 of a benchmark's items; 100 of the hard ones)
is reproducible from what this writes: the sampled lines, byte for byte as the
source holds them and in its order, and beside them ``OUT.draw.json`` naming the
source (path, sha256), the filters, the strata field, the seed, each stratum's
size and draw, and the command that draws the same sample again.

A field is read from the item's top level (``benchmark``) or else from its
``metadata`` object (``difficulty``), as ``replicate collect`` items carry it.
Items without a value of the strata field form the stratum ``(missing)``;
a list or object value is bad input naming the line.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import orjson

from replicate.command_input import read_input
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.provenance import FileProvenance, file_provenance
from replicate.stats.stratified import proportional_allocation, stratified_draw

MISSING = "(missing)"
ALL = "(all)"  # the one stratum of an unstratified draw
METHOD = ("stratified simple random sample without replacement: proportional allocation by largest remainder "
          "(ties to the earlier stratum), numpy.random.default_rng(seed).choice per stratum in stratum order")
_SCALARS = (str, int, float, bool)


def field_value(row: Any, name: str, *, path: Path, line: int) -> Any:
    """The value of ``name`` in an item: its top level, else its ``metadata``; None when absent."""
    if not isinstance(row, dict):
        raise BadInput(f"an item must be a JSON object, got {type(row).__name__}", path=path, line=line)
    value = row.get(name)
    if value is None and isinstance(row.get("metadata"), dict):
        value = row["metadata"].get(name)
    if value is not None and not isinstance(value, _SCALARS):
        raise BadInput(f"field {name!r} holds {type(value).__name__} {orjson.dumps(value).decode()[:60]}; a stratum "
                       "or filter needs one string, number or true/false per item", path=path, line=line)
    return value


def _text(v: Any) -> str:
    return "true" if v is True else "false" if v is False else str(v)


def parse_where(specs: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for s in specs:
        name, sep, value = s.partition("=")
        if not sep or not name:
            raise UsageError(Message(Param("where"), f" must look like FIELD=VALUE, got {s!r}"))
        out.append((name, value))
    return out


@dataclass(frozen=True)
class DrawStratum:
    value: str
    available: int
    drawn: int

    def to_json(self) -> dict:
        return {"value": self.value, "available": self.available, "drawn": self.drawn}


@dataclass(frozen=True, eq=False)
class DrawResult:
    """What was drawn, from what, how; ``lines`` the source lines (1-based) of the drawn items."""

    source: FileProvenance
    n: int
    seed: int
    strata_field: str | None
    where: tuple[tuple[str, str], ...]
    matching: int  # items passing the filters
    total: int  # items in the source
    strata: tuple[DrawStratum, ...]
    ids: tuple[str, ...]
    lines: tuple[int, ...]
    out: str = ""
    out_sha256: str = ""

    def command(self) -> str:
        parts = ["replicate", "draw", str(self.source.path), "--n", str(self.n), "--seed", str(self.seed)]
        if self.strata_field:
            parts += ["--strata", self.strata_field]
        for name, value in self.where:
            parts += ["--where", f"{name}={value}"]
        parts += ["--out", self.out or "OUT"]
        return shlex.join(parts)

    def to_json(self) -> dict:
        return {
            "source": self.source.to_json(),
            "n": self.n,
            "seed": self.seed,
            "strata_field": self.strata_field,
            "where": [{"field": f, "value": v} for f, v in self.where],
            "items_in_source": self.total,
            "items_matching": self.matching,
            "strata": [s.to_json() for s in self.strata],
            "method": METHOD,
            "out": {"path": self.out, "sha256": self.out_sha256},
            "command": self.command(),
            "ids": list(self.ids),
        }


def draw_items(
    path: str | os.PathLike[str], *, n: int, seed: int, strata: str | None = None,
    where: Sequence[tuple[str, str]] = (), id_field: str = "id",
) -> tuple[DrawResult, bytes]:
    """Draw ``n`` items of the JSONL items file ``path`` (after ``where``), stratified by ``strata``;
    the result and the drawn lines (bytes as in the source, in its order)."""
    if seed < 0:
        raise UsageError(Message(Param("seed"), f" must be >= 0, got {seed}"))
    p = Path(path)
    raw = read_input(p, what="items file")
    prov = file_provenance(p, data=raw)
    lines = raw.splitlines()
    kept: list[int] = []  # indices into lines
    values: list[str] = []
    ids: dict[str, int] = {}
    total = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        total += 1
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise BadInput(f"not valid JSON: {exc}", path=p, line=i + 1) from None
        item = field_value(row, id_field, path=p, line=i + 1)
        if item is None:
            raise BadInput(f"an item without {id_field!r}", path=p, line=i + 1)
        if _text(item) in ids:
            raise BadInput(f"duplicate item id {_text(item)!r} (first on line {ids[_text(item)]})", path=p, line=i + 1)
        ids[_text(item)] = i + 1
        if any(_text(field_value(row, f, path=p, line=i + 1)) != v for f, v in where):
            continue
        kept.append(i)
        value = field_value(row, strata, path=p, line=i + 1) if strata else None
        values.append(ALL if not strata else MISSING if value is None else _text(value))
    if total == 0:
        raise BadInput("no items", path=p)
    wanted = " and ".join(f"{f}={v}" for f, v in where)
    if not kept:  # only where --where leaves every item out
        raise UsageError(Message(Param("where"), f" {wanted} matches none of the {total} items in {p}"))
    if n < 1 or n > len(kept):
        what = f" matching {wanted}" if where else ""
        raise UsageError(Message(Param("n"), f" must lie in [1, {len(kept)}] (the items{what} in {p}), got {n}"))
    labels = sorted(set(values), key=lambda v: (v == MISSING, v))
    groups = [np.asarray([k for k, v in enumerate(values) if v == lab], dtype=np.int64) for lab in labels]
    alloc = proportional_allocation([len(g) for g in groups], n)
    drawn = np.sort(np.concatenate(stratified_draw(groups, alloc, seed=seed)))
    chosen = [kept[int(k)] for k in drawn]
    data = b"".join(lines[i] + b"\n" for i in chosen)
    id_of = {v: k for k, v in ids.items()}
    result = DrawResult(
        source=prov, n=n, seed=seed, strata_field=strata, where=tuple(where), matching=len(kept), total=total,
        strata=tuple(DrawStratum(lab, len(g), a) for lab, g, a in zip(labels, groups, alloc)),
        ids=tuple(id_of[i + 1] for i in chosen), lines=tuple(i + 1 for i in chosen),
    )
    return result, data


def manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".draw.json")


def write_draw(result: DrawResult, data: bytes, out: str | os.PathLike[str], *, force: bool = False) -> DrawResult:
    """Write the drawn items to ``out`` and the draw's record to ``OUT.draw.json`` through the one writer: a file
    there is replaced only when it is an earlier 'replicate draw' output, or with ``force``."""
    import dataclasses
    import hashlib

    from replicate.outfile import Outputs

    out = Path(out)
    side = manifest_path(out)
    outputs = Outputs("draw", "out", force=force)
    outputs.check(out, side)
    if out.resolve() == Path(result.source.path).resolve():
        raise UsageError(Message(Param("out"), " is the source items file; write the sample elsewhere"))
    done = dataclasses.replace(result, out=str(out), out_sha256=hashlib.sha256(data).hexdigest())
    outputs.write(out, data)
    outputs.write(side, orjson.dumps(done.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
    return done


def render_draw(result: DrawResult, fmt: Any) -> str:
    from replicate.output import Format, table

    fmt = Format(fmt)
    rows = [[s.value, s.available, s.drawn] for s in result.strata]
    head = f"Drew {result.n} of {result.matching} items"
    if result.where:
        head += f" matching {' and '.join(f'{f}={v}' for f, v in result.where)} ({result.total} in the file)"
    head += f", seed {result.seed}" + (f", stratified by {result.strata_field}" if result.strata_field else "")
    body = table(rows, [result.strata_field or "stratum", "items", "drawn"], fmt)
    lines = [f"## {head}\n" if fmt is Format.markdown else f"{head}\n", body,
             f"source: {result.source.path} (sha256 {result.source.sha256})",
             f"written: {result.out} (sha256 {result.out_sha256}) and {manifest_path(Path(result.out)).name}",
             f"again: {result.command()}"]
    return "\n".join(lines)
