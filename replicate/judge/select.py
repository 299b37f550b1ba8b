"""Naming runs: which files make up which run (I/O-free except reading a TOML file).

A run is one model version's outputs: one file, or several pooled (e.g. the
DL 2019 file and the DL 2020 file of one model). Runs come either from plain
file arguments (one file = one run, named after the file) or from a
``runs.toml`` file whose ``[runs]`` table lists them in version-line order::

    [runs]
    gpt-4o = ["results/gpt-4o_annotations.jsonl", "results_2020/gpt-4o_annotations.jsonl"]
    gpt-4.1 = ["results/gpt-4.1_annotations.jsonl"]
    llm-judge = { files = ["qrels/judge.txt"], reader = "trec-qrels@1" }
    model-a = { files = ["samples_a.jsonl"], reader = "lm-eval-samples@1", filter = "strict-match", correct_field = "exact_match" }

Paths in the table are relative to the TOML file's directory (or ``root``). A
run given as an inline table names its files and, optionally, its reader
(which wins over ``--reader`` for that run; without either, each file's
reader is chosen by content) and reader options (``filter``,
``correct_field``, ``scorer``, ``score_map``, ``epoch``: the reader option
flags' names, each winning over its flag for that run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from replicate.errors import BadInput, Message, Param, UsageError
from replicate.reading.contract import READER_OPTIONS
from replicate.tomlfile import read_toml

if TYPE_CHECKING:
    from replicate.judge.model import Run

_SUFFIXES = (".jsonl.gz", ".json.gz", ".jsonl", ".json", ".gz")
_ANNOTATIONS = "_annotations"


@dataclass(frozen=True)
class RunSpec:
    """A run's name and the files pooled into it (in reading order)."""

    name: str
    paths: tuple[Path, ...]
    reader: str | None = None  # the run's own reader (a runs file's inline table), else None
    options: tuple[tuple[str, str | int], ...] = ()  # the run's own reader options (name, value), else ()
    #: The name is its file's (one file a run on the command line): a model its files name replaces it
    #: (:func:`named_by_model`); a runs file's names are kept as written.
    from_file: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(Path(p) for p in self.paths))
        object.__setattr__(self, "options", tuple(sorted(dict(self.options).items())))
        if not self.name:
            raise ValueError("a run needs a non-empty name")
        if not self.paths:
            raise ValueError(f"run {self.name!r} names no files")


def run_name(path: str | Path) -> str:
    """A file's run name: its file name without ``.jsonl``/``.jsonl.gz`` and ``_annotations``.

    ``results/gpt-4o_annotations.jsonl`` -> ``gpt-4o`` (the released layout
    names every file ``<model>_annotations.jsonl``); ``-`` (standard input) -> ``stdin``.
    """
    if str(path) == "-":
        return "stdin"
    name = Path(path).name
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    if name.endswith(_ANNOTATIONS) and len(name) > len(_ANNOTATIONS):
        name = name[: -len(_ANNOTATIONS)]
    return name


#: A path component that names no model: a commit or snapshot hash, the Hugging Face cache's folders.
_HASH = re.compile(r"^[0-9a-f]{7,64}$")
_NO_MODEL = frozenset(("snapshots", "hub", "huggingface", ".cache", "models", "model", "weights", "hf"))
_CHECKPOINT = re.compile(r"^(checkpoint|ckpt|step|global_step|epoch)[-_]?\d+$", re.IGNORECASE)


def model_run_name(model: str) -> str:
    """The run name of a model a file names: a hub id (``org/name``) as it is; a path (a local model folder, as
    lm-eval's ``model_args`` ``pretrained=/home/x/models/Llama-3-8B`` names it) by its last meaningful component.

    ``/home/x/models/Llama-3-8B`` -> ``Llama-3-8B``; a Hugging Face cache folder
    ``.../models--org--Name/snapshots/<hash>`` -> ``Name``; a checkpoint folder keeps its parent
    (``/runs/sft-7b/checkpoint-500`` -> ``sft-7b/checkpoint-500``). Never a path of the machine that wrote the file.
    """
    text = model.strip()
    is_path = text.startswith(("/", "~", "./", "../", "\\")) or re.match(r"^[A-Za-z]:[\\/]", text) is not None \
        or text.count("/") + text.count("\\") > 1
    if not is_path:
        return text
    parts = [p for p in re.split(r"[\\/]+", text) if p not in ("", ".", "..", "~") and not re.match(r"^[A-Za-z]:$", p)]
    while parts and (_HASH.match(parts[-1]) or parts[-1].lower() in _NO_MODEL):
        parts.pop()
    if not parts:
        return text
    last = parts[-1]
    if last.startswith("models--"):  # the Hugging Face cache: models--<org>--<name>
        return last.split("--")[-1] or last
    if _CHECKPOINT.match(last) and len(parts) > 1:
        return f"{parts[-2]}/{last}"
    return last


def named_by_model(runs: Sequence[Run], from_file: Sequence[bool]) -> tuple[tuple[Run, ...], dict[str, str]]:
    """Runs named by their file (``from_file``), renamed after the model their files name (``about.model``,
    e.g. from an lm-eval results file; a path by its last meaningful component, :func:`model_run_name`), when
    every file of the run names the same one and the names stay unique; and the renaming (old -> new name).
    A runs file's names, and runs whose files name no model, are kept."""
    from replicate.judge.model import evolve

    wanted: dict[str, str] = {}
    for named_by_file, run in zip(from_file, runs):
        models = {dict(f.about).get("model") for f in run.files}
        if named_by_file and len(models) == 1 and None not in models:
            wanted[run.name] = model_run_name(str(next(iter(models))))
    names = [wanted.get(r.name, r.name) for r in runs]
    if not wanted or len(set(names)) != len(names):
        return tuple(runs), {}
    return tuple(evolve(r, name=n) for r, n in zip(runs, names)), wanted


def names_run_file(path: str | Path) -> bool:
    """Whether ``path`` is something a run is read from, as every command reading runs takes it: standard input
    (``-``), a file (or FIFO), or a directory (a HELM run directory, read through the file its reader names;
    :func:`~replicate.judge.load.detect.directory_file` says, once it is read, what a directory lacks)."""
    from replicate.command_input import is_stdio

    return is_stdio(path) or Path(path).exists()


def runs_from_files(paths: Iterable[str | Path]) -> list[RunSpec]:
    """One run per file, named after the file.

    Two files with the same name in different directories (``results/x.jsonl``
    and ``results_2020/x.jsonl``) are told apart by their parent directory.
    """
    files = [Path(p) for p in paths]
    dupes = sorted({str(p) for p in files if files.count(p) > 1})
    if dupes:
        raise UsageError(f"file {dupes[0]!r} is given twice; give each run once")
    names = [run_name(p) for p in files]
    clash = {n for n in names if names.count(n) > 1}
    names = [f"{p.parent.name}/{n}" if n in clash and p.parent.name else n for p, n in zip(files, names)]
    clash = {n for n in names if names.count(n) > 1}
    names = [str(p) if n in clash else n for p, n in zip(files, names)]
    return [RunSpec(n, (p,), from_file=True) for p, n in zip(files, names)]


def runs_from_table(table: Mapping, *, root: Path, where: str) -> list[RunSpec]:
    """Runs from a ``[runs]`` table: name -> path or list of paths (relative to ``root``)."""
    if not isinstance(table, Mapping):
        raise BadInput(f"[runs] must be a table of name = [paths], got {type(table).__name__}", path=where)
    if not table:
        raise BadInput("[runs] lists no runs", path=where)
    out = []
    for name, value in table.items():
        try:
            entry = run_entry(name, value)
        except ValueError as exc:
            raise BadInput(str(exc), path=where) from None
        paths = tuple(Path(v) if Path(v).is_absolute() else root / v for v in entry.files)
        if len(set(paths)) != len(paths):
            raise BadInput(f"run {name!r} lists a file twice", path=where)
        out.append(RunSpec(str(name), paths, entry.reader, entry.options))
    return out


@dataclass(frozen=True)
class RunEntry:
    """One entry of a runs table (``[runs]``, ``[repeats]``, a claims file's ``[runs]``) as written."""

    files: tuple[str, ...]
    reader: str | None = None
    options: tuple[tuple[str, str | int], ...] = ()


#: The keys an inline-table run entry may have.
ENTRY_KEYS: tuple[str, ...] = ("files", "reader", *READER_OPTIONS)


def run_entry(name: object, value: object) -> RunEntry:
    """One runs-table entry: a path, a list of paths, or ``{files = [...], reader = "...", <option> = ...}``.

    Raises ValueError naming the run and what is wrong (the caller adds the file).
    """
    reader: str | None = None
    options: dict[str, str | int] = {}
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(ENTRY_KEYS))
        if unknown:
            raise ValueError(f"run {name!r}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(ENTRY_KEYS)}")
        reader = value.get("reader")
        if reader is not None and (not isinstance(reader, str) or not reader):
            raise ValueError(f"run {name!r}: reader must be a reader name such as 'trec-qrels@1', got {reader!r}")
        options = {k: _option_value(name, k, value[k]) for k in READER_OPTIONS if k in value}
        if options and reader is not None:
            _check_reader_takes(name, reader, options)
        value = value.get("files")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"run {name!r}: expected a path or a non-empty list of paths, got {value!r}")
    return RunEntry(tuple(value), reader, tuple(sorted(options.items())))


def _option_value(name: object, key: str, value: Any) -> str | int:
    """A reader option's value as the command line would give it (``score_map`` tables become ``V=1,V=0``)."""
    if key == "epoch":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"run {name!r}: epoch must be a whole number >= 1, got {value!r}")
        return value
    if key == "score_map" and isinstance(value, Mapping):
        parts = []
        for score, verdict in value.items():
            if isinstance(verdict, bool):
                verdict = int(verdict)
            if verdict not in (0, 1) or isinstance(verdict, float):
                raise ValueError(f"run {name!r}: score_map value for {score!r} must be 1 or 0 (or true/false), got {verdict!r}")
            parts.append(f"{score}={verdict}")
        if not parts:
            raise ValueError(f"run {name!r}: score_map is empty")
        return ",".join(parts)
    if not isinstance(value, str) or not value:
        kind = "a table such as { P = 0 } or a string such as 'P=0,0.5=1'" if key == "score_map" else "a non-empty string"
        raise ValueError(f"run {name!r}: {key} must be {kind}, got {value!r}")
    return value


def _check_reader_takes(name: object, reader: str, options: Mapping[str, object]) -> None:
    """Refuse options the run's named reader does not read (when it declares its options)."""
    from replicate.reading.contract import READERS

    try:
        declared = READERS.get(reader).options
    except UsageError:
        return  # an unknown reader is reported when the run is read, listing the readers there are
    if declared is None:
        return
    unread = sorted(set(options) - set(declared))
    if unread:
        takes = f"it reads {', '.join(declared)}" if declared else "it reads no options"
        raise ValueError(f"run {name!r}: reader {reader} does not read option(s) {', '.join(unread)}; {takes}")


def runs_from_toml(path: str | Path, *, root: Path | None = None) -> list[RunSpec]:
    """Runs listed in the ``[runs]`` table of a TOML file (paths relative to its directory)."""
    path = Path(path)
    data = read_toml(path, what="runs file")
    if "runs" not in data:
        raise BadInput("no [runs] table (expected: [runs] then name = [\"file.jsonl\", ...])", path=path)
    return runs_from_table(data["runs"], root=path.parent if root is None else Path(root), where=str(path))


# --- Which runs a floor, matrix or audit command means ---
# Which runs a floor, matrix or audit command means (no figures; reads a TOML file at most).
#
# Each RUN argument (and each value of ``--edge``/``--main``) is either the name
# of a run in the RUNS.toml given with ``--runs`` (its ``[runs]`` table, and its
# ``[repeats]`` table when present) or what a run is read from (:func:`names_run_file`: a
# file, a HELM run directory, ``-``; each one run, named after it). With ``--runs`` and no RUN arguments, every run of the ``[runs]``
# table is meant, except those named by ``--edge``/``--main``.

@dataclass(frozen=True)
class Selection:
    """The runs to load (each once) and which of them each role refers to."""

    specs: tuple[RunSpec, ...]
    main: tuple[str, ...]  # the RUN arguments, by run name, in order
    extra: tuple[str, ...]  # the --edge/--main values, by run name, in order


def table_specs(runs_toml: Path) -> tuple[list[RunSpec], list[RunSpec]]:
    """(the [runs] entries, the [repeats] entries) of a RUNS.toml."""
    data = read_toml(runs_toml, what="runs file")
    if "runs" not in data:
        raise BadInput('no [runs] table (expected: [runs] then name = ["file.jsonl", ...])', path=runs_toml)
    root = runs_toml.parent
    listed = runs_from_table(data["runs"], root=root, where=str(runs_toml))
    repeats = (
        runs_from_table(data["repeats"], root=root, where=f"{runs_toml} [repeats]") if "repeats" in data else []
    )
    clash = sorted({s.name for s in listed} & {s.name for s in repeats})
    if clash:
        raise BadInput(f"[runs] and [repeats] both name {', '.join(clash)}", path=runs_toml)
    return listed, repeats


def select_runs(args: Sequence[str], runs_toml: Path | None, *, extra: Sequence[str] = ()) -> Selection:
    """Resolve RUN arguments and ``--edge``/``--main`` values to run specs (see module doc)."""
    listed: list[RunSpec] = []
    named: dict[str, RunSpec] = {}
    if runs_toml is not None:
        listed, repeats = table_specs(Path(runs_toml))
        named = {s.name: s for s in [*listed, *repeats]}
    args, extra = list(args), list(extra)
    if not args:
        if runs_toml is None:
            raise UsageError(Message("no runs given: pass RUN files (one per run) or ", Param("runs_toml"), " RUNS.toml"))
        args = [s.name for s in listed if s.name not in extra]
    files: list[str] = []
    for token in [*args, *extra]:
        if token in named or token in files:
            continue
        if not names_run_file(token):
            where = f"; runs in {runs_toml}: {', '.join(named)}" if named else ""
            raise UsageError(Message(f"run {token!r} is neither a run named in ", Param("runs_toml"),
                                     f" nor an existing file or run directory{where}"))
        files.append(token)
    from_files = runs_from_files(files) if files else []
    clash = sorted({s.name for s in from_files} & set(named))
    if clash:
        raise UsageError(Message("a file and a run in ", Param("runs_toml"), f" are both named {', '.join(clash)}; rename one"))
    by_token = {**{n: s for n, s in named.items()}, **dict(zip(files, from_files))}
    chosen: dict[str, RunSpec] = {}
    for token in [*args, *extra]:
        spec = by_token[token]
        chosen.setdefault(spec.name, spec)
    return Selection(
        tuple(chosen.values()),
        tuple(by_token[t].name for t in args),
        tuple(by_token[t].name for t in extra),
    )


def floor_repeats(runs_toml: Path, *, exclude: Sequence[str] = ()) -> tuple[list[str], str]:
    """The repeats a floor means when ``--runs`` is given and no RUN arguments: a run of ``[runs]`` and
    its repeats in ``[repeats]``, and a sentence saying which were taken.

    A repeat belongs to the ``[runs]`` run whose name its own name extends after a separator
    (``alpha-2025-01-repeat`` repeats ``alpha-2025-01``; the longest such name wins). ``[runs]`` is a
    version line, not repeats of one model, so it is never taken whole: without ``[repeats]``, with a
    repeat that extends no run's name, or with repeats of several runs, a UsageError says what to pass.
    ``exclude``: a run named by ``--main`` (a main-results run set against the repeats, not one of them);
    an ``--edge`` may end at a repeat (the upgrade into the model whose floor it is).
    """
    listed, repeats = table_specs(Path(runs_toml))
    names = [s.name for s in listed]
    example = f"replicate floor --runs {runs_toml} RUN RUN-REPEAT"
    if not repeats:
        raise UsageError(Message(
            f"{runs_toml} has no [repeats] table, and its [runs] ({', '.join(names)}) are versions, not repeats "
            f"of one model: name the repeats as RUN arguments, e.g. {example}, or list them "
            "under [repeats] (a repeat named after its run: RUN-repeat = [files])"))
    groups: dict[str, list[str]] = {}
    orphans = []
    for rep in repeats:
        owners = [n for n in names if rep.name.startswith(n) and len(rep.name) > len(n)
                  and not rep.name[len(n)].isalnum()]
        if owners:
            groups.setdefault(max(owners, key=len), []).append(rep.name)
        else:
            orphans.append(rep.name)
    if orphans:
        raise UsageError(Message(
            f"{runs_toml}: [repeats] {', '.join(orphans)} extend(s) no run name of [runs] ({', '.join(names)}), so "
            "which model they repeat is not written down: name the repeats as RUN arguments, "
            f"e.g. replicate floor --runs {runs_toml} RUN {' '.join(orphans)} (the run they repeat, then them)"))
    if len(groups) > 1:
        choices = "; ".join(f"replicate floor --runs {runs_toml} {run} {' '.join(reps)}" for run, reps in groups.items())
        raise UsageError(Message(
            f"{runs_toml}: [repeats] holds repeats of {len(groups)} runs ({', '.join(groups)}); a floor is of one "
            f"model: name its repeats as RUN arguments: {choices}"))
    (run, reps), = groups.items()
    chosen = [n for n in (run, *reps) if n not in exclude]
    return chosen, (f"floor of {run}: {', '.join(chosen)} ([repeats] of {runs_toml}; "
                    "name RUN arguments to choose others)")


# --- The runs a compare, chain or audit means -------------------------------


def runs_given(files: Sequence[str | Path] | None, runs_toml: str | Path | None) -> list[RunSpec]:
    """RunSpecs from file arguments (one file = one run) or from a runs TOML, not both."""
    paths = list(files or [])
    if paths and runs_toml is not None:
        raise UsageError(Message("give run files or ", Param("runs_toml"), " RUNS.toml, not both"))
    if runs_toml is not None:
        return runs_from_toml(runs_toml)
    if not paths:
        raise UsageError(Message("no runs given: pass run files (one per run) or ", Param("runs_toml"), " RUNS.toml"))
    return runs_from_files(paths)


def _pooled_name(paths: Sequence[Path]) -> str:
    """A side's run name: its first file's, with how many more files are pooled into it."""
    names = {run_name(p) for p in paths}
    base = run_name(paths[0])
    return base if len(names) == 1 else f"{base} (+{len(paths) - 1} file{'s' if len(paths) > 2 else ''})"


def edge_specs(old: Sequence[Path], new: Sequence[Path]) -> list[RunSpec]:
    """The two runs of an edge given as files (each side one file or several pooled), named apart."""
    if not old or not new:
        raise UsageError(Message("need both sides: ", Param("old"), " and ", Param("new"), " files"))
    stdin_uses = sum(str(p) == "-" for p in (*old, *new))
    if stdin_uses > 1:
        raise UsageError(
            f"standard input ('-') is given {stdin_uses} times; it can be read only once: "
            "give at most one file as '-'"
        )
    old_name, new_name = _pooled_name(old), _pooled_name(new)
    if old_name == new_name:
        if old[0].parent.name != new[0].parent.name:
            old_name, new_name = f"{old[0].parent.name}/{old_name}", f"{new[0].parent.name}/{new_name}"
        else:
            old_name, new_name = f"{old_name} (old)", f"{new_name} (new)"
    return [RunSpec(old_name, tuple(old), from_file=True), RunSpec(new_name, tuple(new), from_file=True)]


def edge_among(edge: tuple[str, str], specs: Sequence[RunSpec], where: str) -> tuple[str, str]:
    """The run names an edge means among ``specs``: each value a run's name, its file, or its file's run name."""
    by_token = {**{str(s.paths[0]): s.name for s in specs}, **{s.name: s.name for s in specs}}
    by_token.update({run_name(s.paths[0]): s.name for s in specs if run_name(s.paths[0]) not in by_token})
    missing = [t for t in edge if t not in by_token]
    if missing:
        raise UsageError(Message(Param("edge"), f" names {', '.join(map(repr, missing))}, not among {where}; "
                                 f"runs: {', '.join(s.name for s in specs)}"))
    return by_token[edge[0]], by_token[edge[1]]
