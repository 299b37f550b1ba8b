"""Docs that cannot drift: generated pages, README commands and .ci/run agree with the code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.tools import load_tool

docgen = load_tool("docgen")

ROOT = Path(__file__).resolve().parents[2]


def test_generated_pages_are_up_to_date():
    for name, make in docgen.PAGES.items():
        page = (ROOT / "docs" / name).read_text(encoding="utf-8")
        assert page == make() + "\n", f"docs/{name} is stale: run `python tools/docgen.py`"


def test_generated_blocks_are_up_to_date():
    """The blocks generated inside hand-written pages (the four-cell figures of concepts.md and verify.md, read
    from replicate.stats.fourcell.FIGURES; the calibration table) match what the code gives now."""
    pages = docgen.fresh_pages(ROOT / "docs")
    assert {"concepts.md", "verify.md"} <= set(pages)
    for name, (page, fresh) in pages.items():
        assert page == fresh, f"docs/{name} is stale: run `python tools/docgen.py`"
    assert "| `independence_ratio` | regression / independent |" in pages["concepts.md"][0]


def test_generated_sources_are_up_to_date():
    """replicate/stats/figure_attributes.py (a typed attribute per built-in four-cell figure) is what docgen writes
    from the table now, one property per figure in the table's order."""
    from replicate.stats.fourcell import BUILT_IN

    sources = docgen.fresh_sources(ROOT)
    assert set(sources) == {"replicate/stats/figure_attributes.py"}
    for name, (text, fresh) in sources.items():
        assert text == fresh, f"{name} is stale: run `python tools/docgen.py`"
    text = sources["replicate/stats/figure_attributes.py"][0] or ""
    assert re.findall(r"    def (\w+)\(self\) -> float \| None:", text) == [f.name for f in BUILT_IN]


def test_command_reference_covers_every_command():
    from typer.main import get_command

    from replicate.cli.app import app

    text = docgen.command_reference()
    root = get_command(app)
    for name in root.list_commands(None):  # type: ignore[arg-type]
        hidden = root.get_command(None, name).hidden  # type: ignore[arg-type, union-attr]
        assert (f"## `replicate {name}`" in text) is not hidden, name  # hidden ones (version) are not documented


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_readme_quick_start_is_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = _bash_blocks(quick)
    assert len(blocks) == 2, blocks
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1] in ci.splitlines(), "the README's test command must be the one .ci/run runs"


def test_readme_main_job_runs():
    # the first quick-start command minus its install step
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1]
    first = _bash_blocks(quick)[0]
    job = first.split("&&", 1)[1].strip()
    assert job.startswith("python3 -m replicate ")
    args = job.split()[3:]
    out = subprocess.run([sys.executable, "-m", "replicate", *args], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "SYNTHETIC" in out.stdout


def test_docs_links_resolve():
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", md.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (md.parent / target).exists(), f"{md.name}: broken link {target}"


def test_no_test_loads_a_benchmark_and_ci_runs_each_at_its_small_size():
    for path in (ROOT / "tests").rglob("*.py"):
        if path == Path(__file__):
            continue
        text = path.read_text(encoding="utf-8")
        assert '/ "bench"' not in text and "import bench_" not in text, f"{path} loads a benchmark"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'for b in bench/bench_*.py; do' in ci and 'python3 "$b" --small' in ci
    for bench in (ROOT / "bench").glob("bench_*.py"):
        assert "--small" in bench.read_text(encoding="utf-8"), f"{bench.name} has no --small mode for CI"


def test_concepts_calibration_block_is_generated_from_the_recorded_measurement():
    """docs/concepts.md shows the calibration table rendered from bench/calibration.json, not typed by hand."""
    page = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    assert page.count(docgen.CALIBRATION_BEGIN) == 1 and page.count(docgen.CALIBRATION_END) == 1
    assert docgen.with_calibration(page, docgen.calibration_block()) == page, "run `python tools/docgen.py`"
    assert "94-96%" not in page  # the old, unmeasured claim
