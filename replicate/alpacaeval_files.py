"""What AlpacaEval's length-controlled win rate reads (``replicate.pairwise.lc``): its ``df_gamed.csv`` and the
outputs' lengths in an annotations file (input/output; the annotations' preferences themselves are read by the
``alpacaeval-annotations@1`` reader).

``df_gamed.csv`` is in AlpacaEval's Hugging Face dataset ``tatsu-lab/alpaca_eval``
(not in its GitHub repository, nor in any annotations file): a CSV with a header,
a row per annotation of AlpacaEval's two gamed baselines, with the columns
``index`` (the instruction's position, from 0), ``preference`` (0-1; empty:
none), ``std_delta_len``, ``instruction_difficulty`` and ``not_gamed_baseline``
(``True``/``False``) read here, and others (``model``) ignored.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from replicate.command_input import read_input
from replicate.errors import BadInput
from replicate.pairwise.lc import Gamed

GAMED_COLUMNS = ("index", "preference", "std_delta_len", "instruction_difficulty", "not_gamed_baseline")
_BOOLS = {"true": True, "false": False}  # pandas reads True/TRUE/true (and False's) as booleans


def _text(path: Path, what: str) -> str:
    return _decoded(read_input(path, what=what), path)


def _decoded(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput("not valid UTF-8", path=path, line=data.count(b"\n", 0, exc.start) + 1) from None


def _float(value: str, column: str, path: Path, line: int, *, empty_ok: bool = False) -> float:
    if value == "" and empty_ok:
        return math.nan
    try:
        x = float(value)
    except ValueError:
        raise BadInput(f"{column} {value!r} is not a number", path=path, line=line) from None
    if not math.isfinite(x) and not (empty_ok and math.isnan(x)):
        raise BadInput(f"{column} {value!r} is not a finite number", path=path, line=line)
    return x


def read_gamed(path: Path) -> tuple[Gamed, str]:
    """AlpacaEval's ``df_gamed.csv`` and the file's sha256; a file that is not one (a column missing, a value
    unreadable, a preference outside 0-1) is refused naming the file and line."""
    data = read_input(path, what="df_gamed file")
    reader = csv.reader(io.StringIO(_decoded(data, path), newline=""))
    header = next(reader, None)
    if header is None:
        raise BadInput("empty: expected AlpacaEval's df_gamed.csv (a header, then a row per gamed annotation)", path=path)
    missing = [c for c in GAMED_COLUMNS if c not in header]
    if missing:
        raise BadInput(f"no column {', '.join(missing)}: expected AlpacaEval's df_gamed.csv (columns "
                       f"{', '.join(GAMED_COLUMNS)})", path=path, line=1)
    at = {c: header.index(c) for c in GAMED_COLUMNS}
    cols: dict[str, list] = {c: [] for c in GAMED_COLUMNS}
    for row in reader:
        line = reader.line_num
        if not row:
            continue
        if len(row) != len(header):
            raise BadInput(f"{len(row)} fields, the header has {len(header)}", path=path, line=line)
        raw = {c: row[at[c]].strip() for c in GAMED_COLUMNS}
        index = _float(raw["index"], "index", path, line)
        if index != int(index) or index < 0:
            raise BadInput(f"index {raw['index']!r} is not an instruction position (0, 1, ...)", path=path, line=line)
        pref = _float(raw["preference"], "preference", path, line, empty_ok=True)
        if not math.isnan(pref) and not 0 <= pref <= 1:
            raise BadInput(f"preference {raw['preference']} is outside 0-1 (df_gamed holds preference - 1)",
                           path=path, line=line)
        flag = _BOOLS.get(raw["not_gamed_baseline"].lower())
        if flag is None:
            raise BadInput(f"not_gamed_baseline {raw['not_gamed_baseline']!r} is neither True nor False", path=path,
                           line=line)
        cols["index"].append(int(index))
        cols["preference"].append(pref)
        cols["std_delta_len"].append(_float(raw["std_delta_len"], "std_delta_len", path, line))
        cols["instruction_difficulty"].append(_float(raw["instruction_difficulty"], "instruction_difficulty", path, line))
        cols["not_gamed_baseline"].append(flag)
    gamed = Gamed(np.array(cols["index"], dtype=np.int64), np.array(cols["preference"], dtype=np.float64),
                  np.array(cols["std_delta_len"], dtype=np.float64),
                  np.array(cols["instruction_difficulty"], dtype=np.float64),
                  np.array(cols["not_gamed_baseline"], dtype=bool))
    return gamed, hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Lengths:
    """One annotations file as the length-controlled fit reads it, in file order."""

    path: Path
    model: str  # generator_2
    baseline: str  # generator_1
    preference: np.ndarray  # as recorded; NaN when null
    len_1: np.ndarray  # characters of output_1 (the baseline's)
    len_2: np.ndarray  # characters of output_2 (the model's)


def _array(text: str, path: Path) -> list[tuple[int, dict]]:
    """(line where it starts, object) for each element of the one JSON array ``text`` holds."""
    dec = json.JSONDecoder()
    i = len(text) - len(text.lstrip())
    if text[i : i + 1] != "[":
        raise BadInput("not an AlpacaEval annotations file (one JSON array of annotations)", path=path, line=1)
    out: list[tuple[int, dict]] = []
    i += 1
    line, at = 1, 0
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return out
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise BadInput(f"not JSON ({exc.msg})", path=path, line=exc.lineno) from None
        line, at = line + text.count("\n", at, i), i
        if not isinstance(obj, dict):
            raise BadInput("expected a JSON object (one annotation) in the array", path=path, line=line)
        out.append((line, obj))
        i = end


def read_lengths(path: Path) -> Lengths:
    """An AlpacaEval annotations file's preferences and output lengths (characters, as pandas' ``str.len``);
    refused naming file and line: an annotation without a string output_1, output_2, generator_1 or
    generator_2, a preference neither a number nor null, and a file with more than one generator_1 or
    generator_2 (AlpacaEval fits one model against one baseline)."""
    text = _text(path, "annotations file")
    prefs: list[float] = []
    lens: list[tuple[int, int]] = []
    names: dict[str, tuple[str, int]] = {}
    for line, obj in _array(text, path):
        for name in ("generator_1", "generator_2", "output_1", "output_2"):
            if type(obj.get(name)) is not str:
                raise BadInput(f"the length-controlled win rate needs {name!r} as a string", path=path, line=line)
        for name in ("generator_1", "generator_2"):
            first = names.setdefault(name, (obj[name], line))
            if obj[name] != first[0]:
                raise BadInput(f"{name} {obj[name]!r}, but line {first[1]} has {first[0]!r}: AlpacaEval's "
                               "length-controlled fit takes one model's annotations against one baseline",
                               path=path, line=line)
        value = obj.get("preference")
        if value is not None and type(value) not in (int, float):
            raise BadInput("'preference' must be a number or null", path=path, line=line)
        prefs.append(math.nan if value is None else float(value))
        lens.append((len(obj["output_1"]), len(obj["output_2"])))
    if not prefs:
        raise BadInput("no annotations", path=path, line=1)
    arr = np.array(lens, dtype=np.int64).reshape(-1, 2)
    return Lengths(path, names["generator_2"][0], names["generator_1"][0], np.array(prefs, dtype=np.float64),
                   arr[:, 0], arr[:, 1])
