"""The README's K-trial flow, run as written in a committed temporary copy of the
repository's files, leaves `git status` clean (no lock or other stray file)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from replicate.cli.app import app
from replicate.collect.simserver import load_sim_config, start_sim_server

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def k_trial_flow() -> list[str]:
    m = re.search(r"## A K-trial collection without an API key\n.*?```[a-z]*\n(.*?)```", README, re.S)
    assert m, "README has no K-trial block"
    return [ln.strip() for ln in m[1].splitlines() if ln.strip()]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_readme_k_trial_flow_leaves_git_status_clean(tmp_path, monkeypatch):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "fixtures" / "collect", copy / "fixtures" / "collect")
    shutil.copy(ROOT / ".gitignore", copy / ".gitignore")
    lines = k_trial_flow()
    sim_line = next(ln for ln in lines if ln.startswith("replicate sim-server"))
    port = shlex.split(sim_line)[shlex.split(sim_line).index("--port") + 1]
    runner = CliRunner()
    monkeypatch.chdir(copy)
    server = None
    try:
        for line in lines:
            words = shlex.split(line)
            if words[0] == "export":
                name, value = words[1].split("=", 1)
                monkeypatch.setenv(name, value)
            elif words[:2] == ["replicate", "sim-server"]:
                assert words[-1] == "&"
                sim = load_sim_config(Path(words[words.index("--config") + 1]))
                server = start_sim_server(sim, api_key="any-secret").__enter__()
                # the copy's config points at the sim on a free port instead of the README's port
                cfg = copy / "fixtures" / "collect" / "config.toml"
                cfg.write_text(cfg.read_text().replace(f"127.0.0.1:{port}/", urlsplit(server.url).netloc + "/"))
                _git(copy, "init", "-q")
                _git(copy, "add", "-A")
                _git(copy, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "copy")
            elif words[0] == "replicate":
                r = runner.invoke(app, words[1:])
                assert r.exit_code == 0, (line, r.output)
            elif words == ["kill", "%1"]:
                server.__exit__(None, None, None)
                server = None
            else:
                pytest.fail(f"README K-trial flow: a line this test does not know how to run: {line}")
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    assert (copy / "demo.trials.jsonl").is_file()  # the flow ran
    assert _git(copy, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_verify_page_example_leaves_git_status_clean(tmp_path, monkeypatch):
    doc = (ROOT / "docs" / "verify.md").read_text()
    m = re.search(r"^(replicate verify fixtures/example/claims\.toml [^\n]*--out note\.md[^\n]*)$", doc, re.M)
    assert m, "docs/verify.md shows no 'replicate verify ... --out note.md' command"
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "fixtures" / "example", copy / "fixtures" / "example")
    shutil.copy(ROOT / ".gitignore", copy / ".gitignore")
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "copy")
    monkeypatch.chdir(copy)
    r = CliRunner().invoke(app, shlex.split(m[1])[1:])
    assert r.exit_code == 0, r.output
    assert (copy / "note.md").is_file()
    assert _git(copy, "status", "--porcelain", "--untracked-files=all") == ""  # note.md used to show up
