"""The layering rule of the README's Development section, checked on the source (AST).

Every import a module makes at run time counts, including imports inside
functions; imports under ``if TYPE_CHECKING:`` do not (they never run), except
for import circles: a circle through a type checker's import still ties the
modules into one unit a reader must take in at once.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "replicate"

#: Modules that read or write files, talk to the network or run programs.
IO_MODULES = (
    "requests", "git", "subprocess", "socket", "http", "urllib", "shutil", "tempfile", "gzip",
    "replicate.judge.load", "replicate.judge.api", "replicate.trials.load", "replicate.command_input",
    "replicate.tomlfile", "replicate.collect", "replicate.fetch.api", "replicate.fetch.gitfetch",
    "replicate.fetch.httpfetch", "replicate.fetch.cache", "replicate.verify.api", "replicate.scoring.pipeline",
    "replicate.rankings.load", "replicate.outfile",
)
#: Standard-library modules a pure statistics module has no use for.
STDLIB_IO = ("os", "io", "pathlib", "glob", "csv", "json", "pickle", "sqlite3", "tomllib", "zipfile", "tarfile")
RENDER = ("replicate.judge.render", "replicate.trials.render", "replicate.trials.costs_render", "replicate.trials.fresh_render", "replicate.fetch.render",
          "replicate.judge.edge_plots",
          "replicate.output", "replicate.rankings.render")
PURE_JUDGE = ("replicate.judge.align", "replicate.judge.compare", "replicate.judge.matrix", "replicate.judge.pairs",
              "replicate.judge.model", "replicate.judge.audit", "replicate.judge.floor",
              "replicate.judge.sourcerule", "replicate.judge.harness",
              "replicate.rankings.compute", "replicate.rankings.result", "replicate.rankings.model",
              "replicate.pairwise")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def runtime_imports(path: Path, *, type_checking: bool = False) -> set[str]:
    """Every module ``path`` imports at run time (``from a import b`` gives ``a`` and ``a.b``); with
    ``type_checking``, those under ``if TYPE_CHECKING:`` too."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, ast.Import):
                out.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    name = ".".join(base + ([child.module] if child.module else []))
                else:
                    name = child.module or ""
                out.add(name)
                out.update(f"{name}.{a.name}" for a in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return out


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


MODULES = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _imports_of(path: Path, type_checking: bool = False) -> frozenset[str]:
    """:func:`runtime_imports` of a package module, parsed once for all the tests here."""
    return frozenset(runtime_imports(path, type_checking=type_checking))


def _violations(selected, bad) -> list[str]:
    """``module imports name`` for each selected module (a tuple of packages, or a set of
    module names) and each name it imports that ``bad`` rejects."""
    found = []
    for name, path in MODULES.items():
        if name in selected if isinstance(selected, set) else _under(name, selected):
            found += [f"{name} imports {i}" for i in sorted(_imports_of(path)) if bad(i)]
    return found


def test_the_scanner_sees_lazy_imports_and_skips_type_checking_blocks(tmp_path):
    src = tmp_path / "replicate" / "x" / "m.py"
    src.parent.mkdir(parents=True)
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import git\n"
                   "def f():\n    import requests\n    from .sib import y\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert runtime_imports(src) == {"typing", "typing.TYPE_CHECKING", "requests", "replicate.x.sib",
                                        "replicate.x.sib.y"}
        assert "git" in runtime_imports(src, type_checking=True)
    finally:
        ROOT = saved


#: The command line and ``python -m replicate``, which starts it.
CLI = ("replicate.cli", "replicate.__main__")
LIBRARY = {n for n in MODULES if not _under(n, CLI)}


def test_no_library_module_imports_the_cli():
    assert _violations(LIBRARY, lambda i: _under(i, ("replicate.cli",))) == []


def test_only_the_cli_imports_typer():
    assert _violations(LIBRARY, lambda i: _under(i, ("typer", "click"))) == []


def test_stats_imports_only_numpy_scipy_and_itself():
    def bad(i: str) -> bool:
        if _under(i, ("replicate",)):
            return not _under(i, ("replicate.stats", "replicate.errors"))
        return _under(i, IO_MODULES + STDLIB_IO) or _under(i, ("orjson", "tabulate", "typer"))

    assert _violations(("replicate.stats",), bad) == []


@pytest.mark.parametrize("layer", [RENDER, PURE_JUDGE], ids=["render", "pure-judge"])
def test_render_and_pure_judge_modules_do_no_io(layer):
    assert _violations(layer, lambda i: _under(i, IO_MODULES)) == []


def test_core_reaches_the_built_in_plugins_only_through_entry_points():
    # replicate_parsers (parsers, scorers with their answer extraction, readers) registers like a
    # third-party plugin: nothing in replicate/ imports it.
    assert _violations(set(MODULES), lambda i: _under(i, ("replicate_parsers",))) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_the_cycle_finder_finds_a_circle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_modules():
    # Imports inside functions and under TYPE_CHECKING count too: a circle there still ties the modules into
    # one unit. (A module importing a name from the package itself, ``from replicate import X``, closes a
    # circle through the package's TYPE_CHECKING block; the version is replicate.version.tool_version.)
    graph = {m: {i for i in _imports_of(p, True) if i in MODULES and i != m} for m, p in MODULES.items()}
    assert _cycles(graph) == []


def test_the_circle_test_sees_a_circle_closed_by_a_type_checking_import(tmp_path):
    a, b = tmp_path / "replicate" / "a.py", tmp_path / "replicate" / "b.py"
    a.parent.mkdir(parents=True)
    a.write_text("import replicate.b\n")
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from replicate.a import X\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        graph = {_module(p): {i for i in runtime_imports(p, type_checking=True) if i in ("replicate.a", "replicate.b")}
                 for p in (a, b)}
    finally:
        ROOT = saved
    assert _cycles(graph) == [["replicate.a", "replicate.b"]]


# -- the plugin API (issue 32 item 7) ---------------------------------------------------------------

PLUGINS = ROOT / "parsers" / "replicate_parsers"
#: The public modules of replicate a plugin imports: the contracts (readers, parsers, scorers), the reader
#: toolkit beside them, and the shared vocabulary (labels, errors, input files). The built-in plugins
#: use nothing else, as a third party's plugin could not either.
PLUGIN_API = ("replicate.reading.contract", "replicate.reading.stream", "replicate.reading.jsonl", "replicate.reading.parquet",
              "replicate.parsing",
              "replicate.scoring.base", "replicate.labels", "replicate.errors", "replicate.command_input")
#: The reader contract and its toolkit: the loader (replicate.judge) builds on them, never the reverse.
READER_API = ("replicate.reading.contract", "replicate.reading.stream", "replicate.reading.jsonl", "replicate.reading.parquet")


def _plugin_imports() -> dict[str, list[tuple[str, str]]]:
    """Plugin module -> (module, name) of each ``from M import name`` / ``import M`` it makes at run time."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(PLUGINS.glob("*.py")):
        found: list[tuple[str, str]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
                found += [(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, "") for a in node.names]
        out[path.stem] = found
    return out


def test_plugins_import_only_the_public_plugin_api():
    bad = [f"{m} imports {mod}" for m, found in _plugin_imports().items() for mod, _ in found
           if _under(mod, ("replicate",)) and not _under(mod, PLUGIN_API)]
    assert bad == []


def test_plugins_import_no_private_name():
    bad = [f"{m} imports {mod}.{name}" for m, found in _plugin_imports().items() for mod, name in found
           if name.startswith("_") and (_under(mod, ("replicate",)) or _under(mod, ("replicate_parsers",)))]
    assert bad == []


def _closure(start: str) -> set[str]:
    """Every package module ``start`` reaches by run-time imports."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in MODULES:
            continue
        seen.add(name)
        todo += [i for i in _imports_of(MODULES[name]) if i in MODULES]
    return seen


@pytest.mark.parametrize("module", READER_API + PLUGIN_API)
def test_the_reader_contract_and_toolkit_reach_nothing_in_judge(module):
    assert module in MODULES
    assert sorted(m for m in _closure(module) if _under(m, ("replicate.judge",))) == []


def test_one_key_separator():
    from replicate.judge.model import KEY_SEP
    from replicate.reading.stream import KEY_SEP as TOOLKIT_KEY_SEP

    assert KEY_SEP == TOOLKIT_KEY_SEP == "\x1f"
